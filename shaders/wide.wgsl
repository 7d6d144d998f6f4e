// 32-, 64- and 128-bit words, on a grid of rows: x the position in a row, y and z (linear)
// the row over axes 1 and up. Rows longer than half a workgroup take one each, and each
// invocation writes WIDE_ELEMS of its elements, a grid width apart (so a SIMD group's
// accesses stay contiguous), sharing the row's offsets. Shorter rows would leave most of a
// workgroup idle: as many as fit share one (P.pack, src/gpu/kernels/wide.rs's pack), one element
// an invocation. Any strides on either side.

@compute @workgroup_size(WORKGROUP)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let inner = P.axes[0];
    let pack = P.pack;
    let sub = divide(gid.x, inner.len_magic, inner.len_shift);
    let row = (gid.y + gid.z * nwg.y) * pack + sub;
    // Invocations past the rows write nothing: their loop below ends at once. (Returning
    // here instead made every row's loop slower on lavapipe.)
    let len = select(0u, inner.len, sub < pack && row < P.count);
    let r = row_of(row);
    let x0 = gid.x - sub * inner.len;
    let step = nwg.x * WORKGROUP;
    // Four elements at a time, their loads before their stores, so that four loads are in
    // flight (input and output may be one buffer's read-write bindings: no compiler may hoist
    // a load above an earlier store itself).
    for (var e = 0u; e < WIDE_ELEMS; e += 4u) {
        let xa = x0 + e * step;
        // Past the row: later elements are further past (a SIMD group leaves together).
        if (xa >= len) {
            break;
        }
        let xb = xa + step;
        let xc = xb + step;
        let xd = xc + step;
        let va = wide_element(xa, r);
        var vb = constant_word();
        var vc = vb;
        var vd = vb;
        if (xb < len) {
            vb = wide_element(xb, r);
        }
        if (xc < len) {
            vc = wide_element(xc, r);
        }
        if (xd < len) {
            vd = wide_element(xd, r);
        }
        store_dst(r.dst + (xa + inner.start) * inner.out_stride, va);
        if (xb < len) {
            store_dst(r.dst + (xb + inner.start) * inner.out_stride, vb);
        }
        if (xc < len) {
            store_dst(r.dst + (xc + inner.start) * inner.out_stride, vc);
        }
        if (xd < len) {
            store_dst(r.dst + (xd + inner.start) * inner.out_stride, vd);
        }
    }
}

// The word at window-local position x of row r: its input word, or the constant.
fn wide_element(x: u32, r: Row) -> WORD {
    let inner = P.axes[0];
    let k = source_coord(x + inner.start, 0u);
    var v = constant_word();
    if (k != NONE && r.inside) {
        v = load_src(r.src + (inner.crop_start + k) * inner.in_stride);
    }
    return v;
}
