/**
 * The dashboard's authority: without the admin token it only watches (no
 * controls, and the server refuses teacher events from a student socket);
 * with it, one click races every scheme, one run each, and the teacher
 * gives the attacker lesson with workers the server simulates.
 *
 * The file has a server of its own (E2E_PORT + 5): the race test counts runs,
 * and no other spec's runs (nor their order) can change what it counts.
 */
import { expect, test, type Locator } from '@playwright/test';
import { SCHEME_NAMES } from '../core/atomo/types';
import { LINK_PRESETS } from '../core/traffic/linkModel';
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

test('with the token, "Start a race" creates one running run per scheme on the chosen link', async ({ page }) => {
  await page.goto(`${baseURL}/dashboard?token=${ADMIN_TOKEN}`);
  await expect(page.getByText('teacher controls on')).toBeVisible();
  // The form: atomo-auto takes bytes per round for the whole model, and error feedback marks a run biased.
  const form = page.getByRole('form', { name: 'Create a run' });
  await form.getByLabel('Name').fill('auto with feedback');
  await form.getByLabel('Scheme').selectOption('atomo-auto');
  await expect(form.getByTestId('budget-by')).toHaveCount(0);
  await form.getByTestId('byte-budget').fill('12000');
  await form.getByTestId('error-feedback').check();
  await expect(form.getByText(/^Biased:/)).toBeVisible();
  await form.getByLabel('Start it right away').uncheck();
  await form.getByRole('button', { name: 'Create run' }).click();
  const autoRow = page
    .getByTestId('runs-table')
    .locator('tbody tr[data-scheme="atomo-auto"]', { hasText: 'auto with feedback' });
  await expect(autoRow).toContainText('12.0 kB per round split across layers, error feedback (biased)');
  expect((await listRuns(baseURL)).find((run) => run.config.name === 'auto with feedback')?.config).toMatchObject({
    byteBudget: 12_000,
    errorFeedback: true,
  });
  const before = (await listRuns(baseURL)).length;
  // The race paces its tabs to a link preset, and its runs' names say which.
  await page.getByTestId('race-link').selectOption('classroomWifi');
  await page.getByRole('button', { name: 'Start a race' }).click();
  const raceRows = page.getByTestId('runs-table').locator('tbody tr', { hasText: 'race' });
  await expect(raceRows).toHaveCount(SCHEME_NAMES.length);
  for (const row of await raceRows.all()) await expect(row).toContainText('· classroom Wi-Fi ·');
  for (const scheme of SCHEME_NAMES) {
    await expect(
      page.getByTestId('runs-table').locator(`tbody tr[data-scheme="${scheme}"]`, { hasText: 'race' }),
    ).toHaveAttribute('data-status', 'running');
  }
  const runs = await listRuns(baseURL);
  expect(runs.length).toBe(before + SCHEME_NAMES.length);
  const raced = runs.filter((run) => run.config.name.startsWith('race '));
  expect(raced.map((run) => run.config.link)).toEqual(SCHEME_NAMES.map(() => LINK_PRESETS.classroomWifi));
  await expect(page.getByRole('button', { name: 'Start a race' })).toBeEnabled();

  // The teacher can clean up: deleting a run removes its row.
  const entryRow = page.getByTestId('runs-table').locator('tbody tr[data-scheme="atomo-entry"]', { hasText: 'race' });
  await entryRow.getByRole('button', { name: /Delete/ }).click();
  await expect(raceRows).toHaveCount(SCHEME_NAMES.length - 1);
});

/**
 * The classroom lesson of docs/design.md's robust aggregation, as a teacher
 * gives it: two runs with the same settings but their rule, five workers the
 * server simulates in each plus one marked sign-flipped ×10. The mean's update
 * is (5 − 10)/6 = −5/6 of an honest step, uphill; the default norm bound caps
 * the attacker at 3 honest workers' weight, so the run still descends at
 * about a third of the honest speed. Rounds wait for all six (30 s deadline),
 * so the figures are those of the seed: at round 20 the mean run sits at
 * chance (10%) with its loss in the millions and the default run near 63%;
 * the bounds below leave wide margins either side.
 */
test('the attacker lesson: one sign-flipped worker sinks the mean run while the default rule keeps learning', async ({
  page,
}) => {
  const ROUNDS = 20;
  const HONEST = 5;
  await page.goto(`${baseURL}/dashboard?token=${ADMIN_TOKEN}`);
  await expect(page.getByText('teacher controls on')).toBeVisible();
  const form = page.getByRole('form', { name: 'Create a run' });
  const runs = page.getByTestId('runs-table');
  const lessons = [
    { name: 'lesson mean', aggregation: 'mean' },
    { name: 'lesson default', aggregation: 'norm-bound' },
  ] as const;

  const rows: Locator[] = [];
  for (const lesson of lessons) {
    await form.getByLabel('Name').fill(lesson.name);
    await form.getByLabel('Scheme').selectOption('none');
    await form.getByLabel('Round deadline (s)').fill('30');
    await form.getByLabel('Evaluate every (rounds)').fill('2');
    await form.getByLabel('Aggregation').selectOption(lesson.aggregation);
    await form.getByLabel('Start it right away').uncheck();
    await form.getByRole('button', { name: 'Create run' }).click();
    const row = runs.locator('tbody tr', { hasText: lesson.name });
    await expect(row).toHaveAttribute('data-status', 'created');
    rows.push(row);
  }
  // Each run names its rule under its compression.
  await expect(rows[0]!.getByTestId('aggregation')).toContainText('plain mean');
  await expect(rows[1]!.getByTestId('aggregation')).toContainText('norm bound, k = 3');

  const workers = page.getByTestId('workers-table');
  for (const [i, lesson] of lessons.entries()) {
    const runId = (await rows[i]!.getAttribute('data-run-id'))!;
    const add = rows[i]!.getByRole('button', { name: `Add a worker simulated by the server to ${lesson.name}` });
    for (let n = 0; n <= HONEST; n++) await add.click();
    const members = workers.locator(`tbody tr[data-run-id="${runId}"]`);
    await expect(members).toHaveCount(HONEST + 1);
    await expect(members.locator('[data-simulated="true"]')).toHaveCount(HONEST + 1);
    // The teacher marks the first of them as the attacker.
    const id = (await members.first().getAttribute('data-worker-id'))!;
    await members
      .first()
      .getByRole('combobox', { name: `Classroom attack of worker ${id}` })
      .selectOption('flip');
    await expect(members.first().getByRole('combobox', { name: `Classroom attack of worker ${id}` })).toHaveValue(
      'flip',
    );
  }
  for (const row of rows) await row.getByRole('button', { name: 'Start' }).click();

  const round = (i: number) => rows[i]!.locator('[data-cell="round"]').innerText().then(Number);
  for (const i of [0, 1])
    await expect
      .poll(() => round(i), { timeout: 90_000, message: `${lessons[i]!.name} reaches round ${ROUNDS}` })
      .toBeGreaterThanOrEqual(ROUNDS);
  const accuracy = async (i: number) =>
    Number((await rows[i]!.locator('[data-cell="accuracy"]').innerText()).replace('%', '')) / 100;
  const [mean, robust] = [await accuracy(0), await accuracy(1)];
  // Chance is 10%: the mean run learned nothing; the default run is well past it.
  expect(mean).toBeLessThan(0.2);
  expect(robust).toBeGreaterThan(0.4);

  // Clean up as a teacher would: remove the simulated workers, then the runs.
  for (const [i, lesson] of lessons.entries()) {
    const runId = (await rows[i]!.getAttribute('data-run-id'))!;
    const members = workers.locator(`tbody tr[data-run-id="${runId}"]`);
    for (let n = HONEST + 1; n > 0; n--) {
      await members.first().getByRole('button', { name: 'Remove' }).click();
      await expect(members).toHaveCount(n - 1);
    }
    await rows[i]!.getByRole('button', { name: `Delete ${lesson.name}` }).click();
    await expect(runs.locator('tbody tr', { hasText: lesson.name })).toHaveCount(0);
  }
});
