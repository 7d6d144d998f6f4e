//! The cases: the default suite, the engine shapes of issue 43, the cold-start mix, the
//! smoke suite, and the custom case's lists.

use wgpu_pad::DataType;

/// A case's shape and pads (begins then ends).
pub type Shape = (DataType, &'static [usize], &'static [i64]);

/// An interior case's type, shape and lax.pad's (low, high, interior) per axis.
pub type InteriorShape = (DataType, &'static [usize], &'static [(i64, i64, i64)]);

/// The cold-start mix (its one copy is the library's, beside the kernel variants).
pub use wgpu_pad::gpu::measurement::{COLD_MIX, COLD_MIX_TYPES};

/// The default suite.
pub const SUITE: [(DataType, &[usize], &[i64]); 5] = [
    (DataType::Float32, &[1, 64, 512, 512], &[0, 0, 1, 1, 0, 0, 1, 1]),
    (DataType::Uint8, &[1, 1024, 1024, 3], &[0, 2, 2, 0, 0, 2, 2, 0]),
    (DataType::Float16, &[8, 4096, 256], &[0, 3, 0, 0, 5, 0]),
    (DataType::Int64, &[2, 3, 8, 8], &[0, 0, 1, 1, 0, 0, 1, 1]),
    (DataType::Float32, &[1, 3, 224, 224], &[0, 0, 100, 100, 0, 0, 100, 100]),
];

/// Shapes engines pad most (issue 43): NCHW and NHWC activations and images, short rows, audio
/// framing, a mask.
pub const ENGINE: [(DataType, &[usize], &[i64]); 8] = [
    (DataType::Float16, &[1, 64, 56, 56], &[0, 0, 1, 1, 0, 0, 1, 1]),
    (DataType::Float16, &[8, 4096, 256], &[0, 0, 0, 0, 0, 8]),
    (DataType::Uint8, &[1, 720, 1280, 3], &[0, 4, 4, 0, 0, 4, 4, 0]),
    (DataType::Uint8, &[1, 3, 224, 224], &[0, 0, 3, 3, 0, 0, 3, 3]),
    (DataType::Float16, &[1, 256, 7, 7], &[0, 0, 3, 3, 0, 0, 3, 3]),
    (DataType::Float32, &[1, 1, 16000], &[0, 0, 512, 0, 0, 512]),
    (DataType::Bool, &[4, 77], &[0, 0, 0, 3]),
    (DataType::Int64, &[2, 3, 8, 8], &[0, 0, 1, 1, 0, 0, 1, 1]),
];

/// Interior padding in the engine suite (constant mode only): the input of a stride-2
/// transposed convolution, an activation dilated by 1 on H and W (lax.pad's (low, high,
/// interior) per axis).
pub const ENGINE_INTERIOR: [InteriorShape; 1] =
    [(DataType::Float32, &[1, 64, 128, 128], &[(0, 0, 0), (0, 0, 0), (0, 0, 1), (0, 0, 1)])];

/// Outputs past 256 MiB (`--suite dram`), every mode: the default suite's 16-64 MiB outputs
/// fit or nearly fit a large GPU's L2 (50-60 MB on an H100 or H200); these measure its DRAM.
/// Not in `all`: CI's lavapipe runs have no use for them.
pub const DRAM: [(DataType, &[usize], &[i64]); 2] = [
    (DataType::Float32, &[1, 64, 1024, 1024], &[0, 0, 1, 1, 0, 0, 1, 1]),
    (DataType::Float16, &[32, 4096, 1024], &[0, 0, 0, 0, 0, 8]),
];

/// The default suite's cases at a tiny size (`--smoke`): the same types, pads and modes on
/// shapes of a few hundred bytes, every kernel walk included.
pub const SMOKE: [(DataType, &[usize], &[i64]); 8] = [
    (DataType::Float32, &[1, 4, 8, 8], &[0, 0, 1, 1, 0, 0, 1, 1]),
    (DataType::Uint8, &[1, 8, 8, 3], &[0, 2, 2, 0, 0, 2, 2, 0]),
    (DataType::Float16, &[2, 16, 8], &[0, 3, 0, 0, 5, 0]),
    (DataType::Int64, &[2, 3, 8, 8], &[0, 0, 1, 1, 0, 0, 1, 1]),
    (DataType::Float32, &[1, 3, 6, 6], &[0, 0, 4, 4, 0, 0, 4, 4]),
    (DataType::Float16, &[1, 4, 7, 7], &[0, 0, 3, 3, 0, 0, 3, 3]),
    (DataType::Bool, &[4, 77], &[0, 0, 0, 3]),
    (DataType::Uint8, &[2, 5, 7, 3], &[0, 1, 1, 0, 0, 1, 1, 0]),
];

/// A comma-separated list of integers, or an error naming the flag.
pub fn ints<T: std::str::FromStr>(flag: &str, s: &str) -> Result<Vec<T>, String> {
    let list: Result<Vec<T>, String> = s
        .split(',')
        .filter(|x| !x.trim().is_empty())
        .map(|x| x.trim().parse().map_err(|_| format!("--{flag}: {:?} is not an integer (in {s:?})", x.trim())))
        .collect();
    let list = list?;
    if list.is_empty() {
        return Err(format!("--{flag}: an empty list"));
    }
    Ok(list)
}

#[cfg(test)]
mod tests {
    #[test]
    fn lists_parse_or_say_what_is_wrong() {
        assert_eq!(super::ints::<usize>("shape", "4, 5,6").unwrap(), vec![4, 5, 6]);
        let e = super::ints::<usize>("shape", "4,a").unwrap_err();
        assert!(e.contains("--shape") && e.contains("\"a\""), "{e}");
        assert!(super::ints::<i64>("pads", "").unwrap_err().contains("empty"));
    }
}
