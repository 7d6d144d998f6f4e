// Shared by every pad shader: parameters, bindings, and the walk from output coordinates to
// input offsets. The mode file supplies `source_coord`, the width file `WORD` and `constant_word`.

const NONE: u32 = 0xffffffffu;

struct Params {
    // Axes after folding (1..=16); the innermost has input stride 1.
    rank: u32,
    // Narrow kernel: output u32 words. Wide kernel: rows (output elements / innermost length).
    count: u32,
    // Output elements.
    out_elems: u32,
    // Wide kernel grid: 0 rank 1; 1 y = axis rank-2, z = axes before; 2 rows linear over y, z.
    grid: u32,
    // The constant's bits.
    constant: vec4<u32>,
    // Per axis: output length, pad before, kept length, crop start.
    axis: array<vec4<u32>, 16>,
    // Per axis input stride in elements, four to a vec4.
    in_stride: array<vec4<u32>, 4>,
}

@group(0) @binding(0) var<uniform> P: Params;
// The input is bound read_write, though never written, so that input and output may sit in
// one pooled buffer: wgpu refuses read-only and writable storage of one buffer in one dispatch.
@group(0) @binding(1) var<storage, read_write> src: array<WORD>;
@group(0) @binding(2) var<storage, read_write> dst: array<WORD>;

fn in_stride(d: u32) -> u32 {
    return P.in_stride[d / 4u][d % 4u];
}

// Input offset of coordinate `c` on axis `d`, or NONE in constant padding.
fn axis_offset(d: u32, c: u32) -> u32 {
    let a = P.axis[d];
    let k = source_coord(c, a.y, a.z);
    if (k == NONE) {
        return NONE;
    }
    return (a.w + k) * in_stride(d);
}

// Input offset of the row at row-major position `lin` over axes first..end-1, or NONE if
// any of its coordinates lies in constant padding.
fn row_offset(lin_in: u32, first: u32, end: u32) -> u32 {
    var lin = lin_in;
    var off = 0u;
    var d = end;
    loop {
        if (d <= first) {
            break;
        }
        d -= 1u;
        let m = P.axis[d].x;
        let o = axis_offset(d, lin % m);
        lin = lin / m;
        if (o == NONE) {
            return NONE;
        }
        off += o;
    }
    return off;
}
