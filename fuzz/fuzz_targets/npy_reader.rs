//! Reads fuzzed .npy files with the streaming reader (as the command line does) and the
//! in-memory parser; both must agree, never panic, never allocate by the header's word, and
//! whatever reads must write and read back unchanged.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wgpu_pad::{npy, DataType};

/// The cap the streaming reader runs under: small, so hostile headers are refused by it.
const MAX_BYTES: u64 = 1 << 20;

fuzz_target!(|data: &[u8]| {
    let parsed = npy::parse(data);
    for dtype in
        [None, Some(DataType::Int4), Some(DataType::Bfloat16), Some(DataType::Float8e4m3fn), Some(DataType::String)]
    {
        let streamed = npy::read(&mut &data[..], dtype, MAX_BYTES);
        let from_parse = parsed.as_ref().ok().map(|file| npy::to_tensor(file, dtype));
        if let (Ok((tensor, _)), Some(from_parse)) = (&streamed, &from_parse) {
            assert_eq!(from_parse.as_ref().ok(), Some(tensor), "the streaming reader and the parser disagree");
        }
        let Ok((tensor, descr)) = streamed else { continue };
        let written = npy::to_bytes(&tensor, &descr).expect("a tensor writes");
        let (back, _) = npy::read(&mut written.as_slice(), dtype, u64::MAX).expect("what we write reads");
        assert_eq!(back, tensor);
    }
});
