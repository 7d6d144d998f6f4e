// Symmetric mode: mirror repeating the edge; the host sets the period to 2n.
fn source_coord(o: u32, d: u32) -> u32 {
    let a = P.axes[d];
    let j = o - a.pad_before;
    if (!MULTI_PERIOD) {
        // Pads of at most n: one bounce, no modulo.
        return select(select(2u * a.kept - 1u - j, a.pad_before - o - 1u, o < a.pad_before), j, j < a.kept);
    }
    let k = position_in_period(o, d);
    return select(select(a.period - 1u - k, k, k < a.kept), j, j < a.kept);
}
