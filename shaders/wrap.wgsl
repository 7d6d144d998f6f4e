// Wrap mode: (o - pad before) mod kept length; the host sets the period to the kept length.
fn source_coord(o: u32, d: u32) -> u32 {
    let a = P.axis[d];
    let j = o - a.y;
    if (ONE_PERIOD) {
        // Pads of at most one period: wrap once, no modulo.
        return select(select(j - a.z, a.z - (a.y - o), o < a.y), j, j < a.z);
    }
    return select(position_in_period(o, d), j, j < a.z);
}
