// Wrap mode: (o - pad before) mod kept length; the host sets the period to the kept length.
fn source_coord(o: u32, d: u32) -> u32 {
    let a = P.axis[d];
    let j = o - a.y;
    return select(position_in_period(o, d), j, j < a.z);
}
