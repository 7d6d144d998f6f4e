// The roofline: a copy at the memory's speed, the figure every pad kernel is judged against
// (BabelStream's copy). 16-byte words; the source read-only; each invocation issues its
// WORDS loads, a workgroup's width apart so that every load instruction of a SIMD group covers
// neighbouring words, before its stores. Only the last tile checks bounds: no per-word exit.

const GROUP: u32 = 256u;
const WORDS: u32 = 4u;

@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;

@compute @workgroup_size(256)
fn main(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lane: u32,
) {
    let tile = wg.x + wg.y * groups.x;
    let i = tile * GROUP * WORDS + lane;
    let n = arrayLength(&dst);
    if (i + (WORDS - 1u) * GROUP < n) {
        let a = src[i];
        let b = src[i + GROUP];
        let c = src[i + 2u * GROUP];
        let d = src[i + 3u * GROUP];
        dst[i] = a;
        dst[i + GROUP] = b;
        dst[i + 2u * GROUP] = c;
        dst[i + 3u * GROUP] = d;
        return;
    }
    for (var k = 0u; k < WORDS; k++) {
        let j = i + k * GROUP;
        if (j < n) {
            dst[j] = src[j];
        }
    }
}
