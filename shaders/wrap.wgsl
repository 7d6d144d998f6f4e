// Wrap mode: (o - pad before) mod kept length; the host sets the period to the kept length.
fn source_coord(o: u32, d: u32) -> u32 {
    let a = P.axes[d];
    let j = o - a.pad_before;
    if (!MULTI_PERIOD) {
        // Pads of at most one period: wrap once, no modulo.
        return select(select(j - a.kept, a.kept - (a.pad_before - o), o < a.pad_before), j, j < a.kept);
    }
    return select(position_in_period(o, d), j, j < a.kept);
}
