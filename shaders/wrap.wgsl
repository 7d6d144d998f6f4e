// Wrap mode: (o - p) mod n, a mathematical modulo.
fn source_coord(o: u32, p: u32, n: u32) -> u32 {
    let j = o - p;
    if (j < n) {
        return j;
    }
    if (o >= p) {
        return j % n;
    }
    let back = (p - o) % n;
    return select(n - back, 0u, back == 0u);
}
