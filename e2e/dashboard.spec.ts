/**
 * The dashboard's authority: without the admin token it only watches (no
 * controls, and the server refuses teacher events from a student socket);
 * with it, one click races every scheme, one run each.
 *
 * The file has a server of its own (E2E_PORT + 5): the race test counts runs,
 * and no other spec's runs (nor their order) can change what it counts.
 */
import { expect, test } from '@playwright/test';
import { SCHEME_NAMES } from '../core/atomo/types';
import { ADMIN_TOKEN, connect, listRuns } from './support/admin';
import { ownServer } from './support/ownServer';

const server = ownServer(Number(process.env.E2E_PORT ?? 3199) + 5);
const baseURL = server.baseURL;

test.beforeAll(async () => {
  await server.start();
});
test.afterAll(async () => {
  await server.dispose();
});

test('without the token the dashboard only watches, and the server refuses teacher events', async ({ page }) => {
  await page.goto(`${baseURL}/dashboard`);
  await expect(page.getByTestId('view-only')).toBeVisible();
  await expect(page.getByTestId('runs-table').locator('tbody tr').first()).toBeVisible();
  await expect(page.getByRole('button', { name: 'Start a race' })).toBeDisabled();
  await expect(page.getByRole('button', { name: 'Create run' })).toBeDisabled();
  await expect(page.getByTestId('runs-table').getByRole('button')).toHaveCount(0);
  await expect(page.getByTestId('workers-table').getByRole('button', { name: 'Remove' })).toHaveCount(0);

  // The page is not the only guard: a student socket cannot act either.
  const student = await connect(baseURL);
  try {
    const answer = await student.emitWithAck('run:create', { name: 'sneaky' });
    expect(answer.ok ? null : answer.error.code).toBe('forbidden');
  } finally {
    student.close();
  }
  expect((await listRuns(baseURL)).some((run) => run.config.name === 'sneaky')).toBe(false);
});

test('a wrong token is refused and the dashboard falls back to watching', async ({ page }) => {
  await page.goto(`${baseURL}/dashboard?token=not-the-token`);
  await expect(page.getByText('The admin token in the link was refused')).toBeVisible();
  await expect(page.getByRole('button', { name: 'Start a race' })).toBeDisabled();
});

test('with the token, "Start a race" creates one running run per scheme', async ({ page }) => {
  await page.goto(`${baseURL}/dashboard?token=${ADMIN_TOKEN}`);
  await expect(page.getByText('teacher controls on')).toBeVisible();
  const before = (await listRuns(baseURL)).length;
  await page.getByRole('button', { name: 'Start a race' }).click();
  const raceRows = page.getByTestId('runs-table').locator('tbody tr', { hasText: 'race' });
  await expect(raceRows).toHaveCount(SCHEME_NAMES.length);
  for (const scheme of SCHEME_NAMES) {
    await expect(page.getByTestId('runs-table').locator(`tbody tr[data-scheme="${scheme}"]`, { hasText: 'race' })).toHaveAttribute('data-status', 'running');
  }
  expect((await listRuns(baseURL)).length).toBe(before + SCHEME_NAMES.length);
  await expect(page.getByRole('button', { name: 'Start a race' })).toBeEnabled();

  // The teacher can clean up: deleting a run removes its row.
  const entryRow = page.getByTestId('runs-table').locator('tbody tr[data-scheme="atomo-entry"]', { hasText: 'race' });
  await entryRow.getByRole('button', { name: /Delete/ }).click();
  await expect(raceRows).toHaveCount(SCHEME_NAMES.length - 1);
});
