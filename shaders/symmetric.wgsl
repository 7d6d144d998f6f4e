// Symmetric mode: mirror repeating the edge; the host sets the period to 2n.
fn source_coord(o: u32, d: u32) -> u32 {
    let a = P.axis[d];
    let j = o - a.y;
    let k = position_in_period(o, d);
    let period = P.period[d].x;
    return select(select(period - 1u - k, k, k < a.z), j, j < a.z);
}
