//! Parses fuzzed .npy files; whatever parses must convert, write and read back unchanged.
#![no_main]

use libfuzzer_sys::fuzz_target;
use wgpu_pad::{npy, DataType};

fuzz_target!(|data: &[u8]| {
    let Ok(file) = npy::parse(data) else { return };
    for dtype in [None, Some(DataType::Int4), Some(DataType::Bfloat16), Some(DataType::Float8e4m3fn), Some(DataType::String)] {
        let Ok(tensor) = npy::to_tensor(&file, dtype) else { continue };
        let written = npy::to_bytes(&tensor, &file.descr).expect("a tensor writes");
        let back = npy::parse(&written).expect("what we write parses");
        assert_eq!(npy::to_tensor(&back, dtype).expect("and converts"), tensor);
    }
});
