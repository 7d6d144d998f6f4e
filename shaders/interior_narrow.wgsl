// 8- and 16-bit elements: an invocation a u32 word of the output, ELEMS_PER_WORD elements each
// found alone. A dense output's words run from the one holding element 0 (the bytes of a first
// or last word outside the tensor are kept as they are); where P.word_rows is 1 the output is
// rows of whole words starting on words (src/gpu/interior.rs), each word's place found through
// the view. P.first (element 0's place in the output binding) and P.in_base are in elements.
@compute @workgroup_size(WORKGROUP)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    grid_z = gid.z;
    let t = gid.x + gid.y * groups.x * WORKGROUP;
    if (t >= P.count) {
        return;
    }
    // The word's first element, row-major over the output (wrapping below 0 in a dense
    // output's first word, where element 0 starts mid-word: `e >= P.elems` holds there).
    let first = t * ELEMS_PER_WORD - P.first % ELEMS_PER_WORD;
    var word = P.first / ELEMS_PER_WORD + t;
    if (P.word_rows == 1u) {
        word = (P.first + interior_source(first).y) / ELEMS_PER_WORD;
    }
    var v = 0u;
    for (var j = 0u; j < ELEMS_PER_WORD; j++) {
        let e = first + j;
        var bits = P.constant.x & ELEM_MASK;
        if (e >= P.elems) {
            bits = (load_dst(word) >> (j * ELEM_BITS)) & ELEM_MASK;
        } else {
            let s = interior_source(e);
            if (s.x != NONE) {
                let i = P.in_base + s.x;
                bits = (load_src(i / ELEMS_PER_WORD) >> ((i % ELEMS_PER_WORD) * ELEM_BITS)) & ELEM_MASK;
            }
        }
        v |= bits << (j * ELEM_BITS);
    }
    store_dst(word, v);
}
