// Reflect mode: mirror without repeating the edge; the host sets the period to 2(n - 1)
// (1 when n == 1, which repeats the one element).
fn source_coord(o: u32, d: u32) -> u32 {
    let a = P.axes[d];
    let j = o - a.pad_before;
    if (!MULTI_PERIOD) {
        // Pads of at most n - 1: one bounce, no modulo.
        return select(select(2u * (a.kept - 1u) - j, a.pad_before - o, o < a.pad_before), j, j < a.kept);
    }
    let k = position_in_period(o, d);
    return select(select(a.period - k, k, k < a.kept), j, j < a.kept);
}
