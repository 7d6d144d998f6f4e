// 8- and 16-bit elements (EPW to a u32 word): one invocation per output word, so no two
// invocations write one word. The window is one contiguous run of a dense output starting
// at element P.first of the binding; a word only partly in it keeps its other bytes. The
// input may have any strides.

@compute @workgroup_size(WORKGROUP)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * WORKGROUP;
    if (i >= P.count) {
        return;
    }
    let w = P.first / EPW + i;
    // Byte k of the word is window element e0 + k (wrapping below the window's start).
    let e0 = w * EPW - P.first;
    let k0 = select(0u, P.first - w * EPW, w * EPW < P.first);
    let inner = P.axes[0];
    var row = divide(e0 + k0, inner.len_magic, inner.len_shift);
    var x = e0 + k0 - row * inner.len;
    var r = row_offsets(row);
    var word = 0u;
    var mask = 0u;
    for (var k = k0; k < EPW; k++) {
        if (e0 + k >= P.elems) {
            break;
        }
        let s = source_coord(x + inner.start, 0u);
        var v = P.constant.x & MASK;
        if (s != NONE && r.inside) {
            let idx = r.src + (inner.crop_start + s) * inner.in_stride;
            v = (src[idx >> EPW_LOG2] >> ((idx & (EPW - 1u)) * BITS)) & MASK;
        }
        word |= v << (k * BITS);
        mask |= MASK << (k * BITS);
        x += 1u;
        if (x == inner.len) {
            x = 0u;
            row += 1u;
            r = row_offsets(row);
        }
    }
    if (mask == 0xffffffffu) {
        dst[w] = word;
    } else {
        dst[w] = (dst[w] & ~mask) | word;
    }
}
