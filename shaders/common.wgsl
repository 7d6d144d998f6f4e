// Shared by every pad shader: parameters, bindings, and the walk from output coordinates to
// input offsets. The mode file supplies `source_coord`, the width file `WORD` and
// `constant_word` (or `EPW`, `BITS`, `MASK` for 8- and 16-bit elements).

const NONE: u32 = 0xffffffffu;

struct Params {
    // Axes after merging (1..=16), stored innermost first: axis 0 has input stride 1.
    rank: u32,
    // Wide kernel and narrow rows: rows. Narrow kernel otherwise: output u32 words.
    count: u32,
    // Output elements; for narrow rows, words per row.
    out_elems: u32,
    // Wide kernel grid, see wide.wgsl.
    grid: u32,
    // The constant's bits, repeated to fill a word.
    constant: vec4<u32>,
    // Per axis: output length, pad before, kept length, crop start.
    axis: array<vec4<u32>, 16>,
    // Per axis: magic multiplier and shift dividing by the output length (magic 0: length 1),
    // input stride in elements, unused.
    div: array<vec4<u32>, 16>,
    // Per axis, for the periodic modes: the period, an offset making (o + offset) mod period
    // the position in the period, and the period's magic multiplier and shift.
    period: array<vec4<u32>, 16>,
}

@group(0) @binding(0) var<uniform> P: Params;
// The input is bound read_write, though never written, so that input and output may sit in
// one pooled buffer: wgpu refuses read-only and writable storage of one buffer in one dispatch.
@group(0) @binding(1) var<storage, read_write> src: array<WORD>;
@group(0) @binding(2) var<storage, read_write> dst: array<WORD>;

// The high 32 bits of a * b.
fn mulhi(a: u32, b: u32) -> u32 {
    let a_lo = a & 0xffffu;
    let a_hi = a >> 16u;
    let b_lo = b & 0xffffu;
    let b_hi = b >> 16u;
    let t = a_hi * b_lo + ((a_lo * b_lo) >> 16u);
    let u = (t & 0xffffu) + a_lo * b_hi;
    return a_hi * b_hi + (t >> 16u) + (u >> 16u);
}

// n / d for n < 2^31, given d's magic multiplier and shift (magic 0 means d == 1). Integer
// division by a runtime value is slow on many GPUs and scalarised on CPU-based ones.
fn divide(n: u32, magic: u32, shift: u32) -> u32 {
    return select(mulhi(n, magic) >> shift, n, magic == 0u);
}

// (o - pad before) mod period on axis d, for the periodic modes.
fn position_in_period(o: u32, d: u32) -> u32 {
    let q = P.period[d];
    let t = o + q.y;
    return t - divide(t, q.z, q.w) * q.x;
}

// Input offset of coordinate `c` on axis `d`, or NONE in constant padding.
fn axis_offset(d: u32, c: u32) -> u32 {
    let k = source_coord(c, d);
    if (k == NONE) {
        return NONE;
    }
    return (P.axis[d].w + k) * P.div[d].z;
}

// Input offset of the row at row-major position `lin` over axes first..end-1 (innermost
// first), or NONE if any of its coordinates lies in constant padding.
fn row_offset(lin_in: u32, first: u32, end: u32) -> u32 {
    var lin = lin_in;
    var off = 0u;
    for (var d = first; d < end; d++) {
        // The outermost axis takes what is left, undivided.
        var c = lin;
        if (d + 1u < end) {
            let q = P.div[d];
            lin = divide(c, q.x, q.y);
            c -= lin * P.axis[d].x;
        }
        let o = axis_offset(d, c);
        if (o == NONE) {
            return NONE;
        }
        off += o;
    }
    return off;
}
