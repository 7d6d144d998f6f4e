// The per-word walk of 8- and 16-bit elements (rows too short to walk, or windows whose rows
// differ), after narrow.wgsl.

@compute @workgroup_size(WORKGROUP)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    // NARROW_WORD_RUN words an invocation, a workgroup's width apart: a workgroup covers
    // WORKGROUP * NARROW_WORD_RUN consecutive words, and a SIMD group's lanes store
    // neighbouring words. Each word finds its row by division (arithmetic a GPU has to spare
    // in a memory-bound kernel; lanes a run apart stored 64 bytes apart, 16 times the
    // sectors), then follows it element by element.
    let block = (gid.x - lid + gid.y * nwg.x * WORKGROUP) * NARROW_WORD_RUN;
    let inner = P.axes[0];
    for (var n = 0u; n < NARROW_WORD_RUN; n++) {
        let i = block + lid + n * WORKGROUP;
        if (i >= P.count) {
            break;
        }
        // The word's first element in the window (the window may start mid-word).
        let first_e = select(0u, i * EPW - P.first % EPW, i > 0u);
        var row = divide(first_e, inner.len_magic, inner.len_shift);
        var x = first_e - row * inner.len;
        var r = row_offsets(row);
        let w = P.first / EPW + i;
        // Byte k of the word is window element e0 + k (wrapping below the window's start);
        // (row, x) is element e0 + k0's.
        let e0 = w * EPW - P.first;
        let k0 = select(0u, P.first - w * EPW, w * EPW < P.first);
        var word = 0u;
        var mask = 0u;
        // A whole word of kept elements of one dense row needs no mode function: it is at most
        // two input words, shifted. Rows of any length come here, odd image widths say
        // (lavapipe, u8 [1,3,1023,1023] padded by 1: kernel 36-54 ms element by element, 18-33
        // ms so).
        let j = x + inner.start - inner.pad_before; // wraps past kept when in the pad before
        let fast = k0 == 0u && e0 + EPW <= P.elems && x + EPW <= inner.len && r.inside && inner.in_stride == 1u
            && j < inner.kept && j + EPW - 1u < inner.kept;
        if (fast) {
            let idx = r.src + inner.crop_start + j;
            let shift = (idx & (EPW - 1u)) * BITS;
            let lo = load_src(idx >> EPW_LOG2);
            // An aligned word reads one input word only (the next may be past the input).
            let hi = load_src((idx >> EPW_LOG2) + select(0u, 1u, shift != 0u));
            word = shifted(lo, hi, shift);
            mask = 0xffffffffu;
            x += EPW;
            if (x == inner.len) {
                x = 0u;
                row += 1u;
                r = row_offsets(row);
            }
        }
        // The other words element by element; for a SIMD group of fast words this loop runs
        // no iteration (see narrow_rows).
        for (var k = select(k0, EPW, fast); k < EPW; k++) {
            if (e0 + k >= P.elems) {
                break;
            }
            let s = source_coord(x + inner.start, 0u);
            var v = P.constant.x & MASK;
            if (s != NONE && r.inside) {
                v = input_element(r.src + (inner.crop_start + s) * inner.in_stride);
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
            store_dst(w, word);
        } else {
            store_dst(w, (load_dst(w) & ~mask) | word);
        }
    }
}
