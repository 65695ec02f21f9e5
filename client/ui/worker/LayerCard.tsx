/**
 * This tab's own gradient, layer by layer: how each layer was sent (which
 * atoms, or float32), its bytes and their share of the round (the split of a
 * byte budget), and its indicator ‖G‖_*·√(m+n)/‖g‖₁ as last measured
 * (docs/design.md, "Which atoms suit a layer").
 */
import { useTranslation } from 'react-i18next';
import { formatBytes, formatNumber, formatPercent, sentAsLabel } from '../common/format';
import { TableHead } from '../common/TableHead';
import { workerStore, type WorkerState } from '../store/workerStore';
import { useThrottledStore } from '../store/useThrottled';

const selectLayers = (s: WorkerState) => s.layers;

const COLUMNS = ['layer', 'sentAs', 'bytes', 'indicator'] as const;

/** The layers card (data-testid="worker-layers"). */
export function LayerCard() {
  const { t } = useTranslation();
  const layers = useThrottledStore(workerStore, selectLayers);
  const total = layers.reduce((sum, layer) => sum + layer.bytes, 0);
  return (
    <section className="card worker-layers" data-testid="worker-layers">
      <h2>{t('worker.layers.title')}</h2>
      <p className="muted small">{t('worker.layers.hint')}</p>
      {layers.length === 0 ? (
        <p className="muted">{t('common.waitingFirstRounds')}</p>
      ) : (
        <div className="table-scroll">
          <table className="table table--compact">
            <TableHead columns={COLUMNS} label={(column) => t(`worker.layers.${column}`)} />
            <tbody>
              {layers.map((layer, l) => (
                <tr key={layer.name} data-layer={l}>
                  <td>
                    <span translate="no">{layer.name}</span>{' '}
                    <span className="muted small">{`${layer.shape[0]}×${layer.shape[1]}`}</span>
                  </td>
                  <td data-testid="layer-sent-as">
                    {layer.sentAs === null ? t('common.dash') : sentAsLabel(layer.sentAs)}
                  </td>
                  <td>
                    {formatBytes(layer.bytes)}{' '}
                    <span className="muted small">{total > 0 ? formatPercent(layer.bytes / total) : ''}</span>
                  </td>
                  <td
                    data-testid="layer-indicator"
                    title={
                      layer.indicatorRound === null
                        ? undefined
                        : t('worker.layers.measured', { round: layer.indicatorRound })
                    }
                  >
                    {layer.indicator === null ? t('common.dash') : formatNumber(layer.indicator)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
