// 32-, 64- and 128-bit words: each invocation writes WIDE_ELEMS elements of one row, a grid
// width apart (so a SIMD group's accesses stay contiguous), sharing the row's offsets. x is
// the position in the row, y the coordinate on axis 1, z the axes above; any strides on
// either side.

@compute @workgroup_size(WORKGROUP)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let r = row_at(1u, gid.y, gid.z);
    let inner = P.axes[0];
    let step = nwg.x * WORKGROUP;
    for (var e = 0u; e < WIDE_ELEMS; e++) {
        let x = gid.x + e * step;
        // Past the row: later elements are further past (a SIMD group leaves together).
        if (x >= inner.len) {
            break;
        }
        let o = x + inner.start;
        let k = source_coord(o, 0u);
        var v = constant_word();
        if (k != NONE && r.inside) {
            v = src[r.src + (inner.crop_start + k) * inner.in_stride];
        }
        dst[r.dst + o * inner.out_stride] = v;
    }
}
