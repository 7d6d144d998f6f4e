// Edge mode: clamp to the kept range.
fn source_coord(o: u32, d: u32) -> u32 {
    let a = P.axis[d];
    return select(min(o - a.y, a.z - 1u), 0u, o < a.y);
}
