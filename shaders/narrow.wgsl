// 8- and 16-bit elements (EPW to a u32 word): each output word has one invocation, so no two
// invocations write one word. Rows run on a row grid (narrow_rows.wgsl's main) where they are
// whole words or, ending mid-word, at least two words long; otherwise each invocation takes
// NARROW_WORD_RUN words a workgroup apart (narrow_words.wgsl's main). Either way a SIMD
// group's lanes store neighbouring words (docs/ARCHITECTURE.md). The window is one contiguous
// run of a dense output starting at element P.first of the binding; a word only partly in it
// keeps its other bytes. The input may have any strides. This file: what both walks share.

// A word of the constant element, repeated (the uniform holds one element).
fn constant_word() -> u32 {
    return (P.constant.x & MASK) * (0xffffffffu / MASK);
}

// The word that starts `shift` bits into input word `lo` and runs on into `hi`.
fn shifted(lo: u32, hi: u32, shift: u32) -> u32 {
    return select((lo >> shift) | (hi << ((32u - shift) & 31u)), lo, shift == 0u);
}

// The input element at offset idx (in elements) of the input binding.
fn input_element(idx: u32) -> u32 {
    return (load_src(idx >> EPW_LOG2) >> ((idx & (EPW - 1u)) * BITS)) & MASK;
}
