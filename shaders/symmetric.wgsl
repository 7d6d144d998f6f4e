// Symmetric mode: mirror repeating the edge; the host sets the period to 2n.
fn source_coord(o: u32, d: u32) -> u32 {
    let a = P.axis[d];
    let j = o - a.y;
    if (ONE_PERIOD) {
        // Pads of at most n: one bounce, no modulo.
        return select(select(2u * a.z - 1u - j, a.y - o - 1u, o < a.y), j, j < a.z);
    }
    let k = position_in_period(o, d);
    let period = P.period[d].x;
    return select(select(period - 1u - k, k, k < a.z), j, j < a.z);
}
