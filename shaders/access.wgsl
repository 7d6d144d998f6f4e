// Every access to the input and output of a pad or interior pad shader goes through these
// (a test counts each word's stores by rewriting store_dst: tests/store_once.rs).

// A source offset that is none: the constant.
const NONE: u32 = 0xffffffffu;

fn load_src(i: u32) -> WORD {
    return src[i];
}

fn store_dst(i: u32, v: WORD) {
    dst[i] = v;
}

// A read of the output (the bytes of a word outside the window, kept).
fn load_dst(i: u32) -> WORD {
    return dst[i];
}
