/** One or two sentences on each idea the controls expose, written for a class, not for a paper's reviewer. */

/** What each scheme and knob means (data-testid="explainers"). */
export function Explainers() {
  return (
    <aside className="explainers" data-testid="explainers">
      <dl>
        <dt>ATOMO</dt>
        <dd>
          Writes each layer's gradient as a sum of simple pieces (atoms), then sends each piece only with some probability, scaled up so the average is exact.
          Spectral ATOMO uses the gradient's singular vectors as pieces, entry-wise ATOMO its single entries.
        </dd>
        <dt>Budget</dt>
        <dd>The number of atoms ATOMO sends per layer on average. A bigger budget means more bytes and a less noisy gradient.</dd>
        <dt>QSGD levels</dt>
        <dd>QSGD rounds every entry, at random, to one of a few levels between 0 and the gradient's norm, and sends a sign and a level. More levels: more bits per entry, less noise.</dd>
        <dt>TernGrad</dt>
        <dd>Sends each entry as −1, 0 or +1 (2 bits) times one shared scale, keeping an entry with probability proportional to its size.</dd>
        <dt>float32</dt>
        <dd>The uncompressed gradient: 4 bytes per weight. The baseline every other scheme is measured against.</dd>
      </dl>
    </aside>
  );
}
