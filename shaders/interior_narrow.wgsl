// 8- and 16-bit elements: an invocation a u32 word of the dense output, ELEMS_PER_WORD elements
// each found alone; the bytes of a first or last word outside the tensor are kept as they are.
// P.first (element 0's place in the output binding) and P.in_base are in elements here.
@compute @workgroup_size(WORKGROUP)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    grid_z = gid.z;
    let t = gid.x + gid.y * groups.x * WORKGROUP;
    if (t >= P.count) {
        return;
    }
    let word = P.first / ELEMS_PER_WORD + t;
    var v = 0u;
    for (var j = 0u; j < ELEMS_PER_WORD; j++) {
        let at = word * ELEMS_PER_WORD + j;
        var bits = P.constant.x & ELEM_MASK;
        if (at < P.first || at - P.first >= P.elems) {
            bits = (load_dst(word) >> (j * ELEM_BITS)) & ELEM_MASK;
        } else {
            let s = interior_source(at - P.first);
            if (s.x != NONE) {
                let i = P.in_base + s.x;
                bits = (load_src(i / ELEMS_PER_WORD) >> ((i % ELEMS_PER_WORD) * ELEM_BITS)) & ELEM_MASK;
            }
        }
        v |= bits << (j * ELEM_BITS);
    }
    store_dst(word, v);
}
