// Edge mode: clamp to the kept range.
fn source_coord(o: u32, d: u32) -> u32 {
    let a = P.axes[d];
    return select(min(o - a.pad_before, a.kept - 1u), 0u, o < a.pad_before);
}
