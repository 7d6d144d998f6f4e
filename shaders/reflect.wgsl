// Reflect mode: mirror without repeating the edge, period 2(n - 1); n == 1 repeats it.
fn source_coord(o: u32, p: u32, n: u32) -> u32 {
    let j = o - p;
    if (j < n) {
        return j;
    }
    if (n == 1u) {
        return 0u;
    }
    let period = 2u * (n - 1u);
    var k: u32;
    if (o >= p) {
        k = j % period;
    } else {
        let back = (p - o) % period;
        k = select(period - back, 0u, back == 0u);
    }
    return select(period - k, k, k < n);
}
