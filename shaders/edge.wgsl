// Edge mode: clamp to the kept range.
fn source_coord(o: u32, p: u32, n: u32) -> u32 {
    if (o < p) {
        return 0u;
    }
    return min(o - p, n - 1u);
}
