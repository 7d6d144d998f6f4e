//! One GPU timer, at steady clocks, for every measurement of the project: the harness's
//! (`gpu_vs_cpu`) and the fused convolution's (`examples/fused_conv`, which includes this
//! file). Each timed thing is warmed up for `Steady::warmup_ms` of GPU work, then run in
//! batches of about `Steady::batch_ms` back to back, timed by GPU timestamps where the device
//! writes them, else by wall time around its submit and wait.
#![allow(dead_code)] // each of the two that include it uses part of it

use std::time::Instant;

/// What a measurement failed on: a message naming the case's step.
pub type Failed = String;

/// How a case reaches steady clocks: at least `warmup_ms` of GPU work on each timed thing
/// before its figures, then batches of about `batch_ms` of back-to-back dispatches, sized
/// from a warm batch (a real GPU given one dispatch a submit, the host waiting between them,
/// never reaches steady clocks: the H200's 64 MiB copy took 161 µs a copy in batches of 15
/// and 327 µs in batches of 6).
#[derive(Debug, Clone, Copy)]
pub struct Steady {
    pub warmup_ms: f64,
    pub batch_ms: f64,
}

/// Dispatches a batch takes at most (a tiny pad's 20 ms on a real GPU is thousands).
pub const BATCH_MAX: usize = 4096;

/// Dispatches in a batch, given one warm dispatch's time: about `batch_ms` together, 1 to
/// BATCH_MAX (BATCH_MAX where the time is 0 or not a number: a timer too coarse to see it).
pub fn batch_size(single_ms: f64, batch_ms: f64) -> usize {
    if single_ms.is_nan() || single_ms <= 0.0 {
        return BATCH_MAX;
    }
    ((batch_ms / single_ms).ceil() as usize).clamp(1, BATCH_MAX)
}

/// Which timestamps pass `i` of `n` back to back writes: the first pass's beginning (query 0)
/// and the last pass's end (query 1), no others. `None` for a pass between them: wgpu
/// rejects timestamp writes naming neither index.
pub fn pass_timestamps(i: usize, n: usize) -> Option<(Option<u32>, Option<u32>)> {
    let begin = (i == 0).then_some(0);
    let end = (i + 1 == n).then_some(1);
    (begin.is_some() || end.is_some()).then_some((begin, end))
}

/// Warms `time` up (it times `n` dispatches back to back, per dispatch) for `steady.warmup_ms`
/// of GPU time, doubling its batch, then sizes the batch from a warm one.
pub fn steady_batch(steady: &Steady, time: impl Fn(usize) -> Result<f64, Failed>) -> Result<usize, Failed> {
    let (mut spent, mut n) = (0.0, 1);
    // Bounded: a timer that sees nothing (0) must not spin.
    for _ in 0..32 {
        if spent >= steady.warmup_ms {
            break;
        }
        let t = time(n)?;
        spent += t * n as f64;
        n = (n * 2).min(BATCH_MAX);
    }
    let probe = n.clamp(1, 16);
    Ok(batch_size(time(probe)?, steady.batch_ms))
}

/// Times GPU work: timestamp queries around compute passes (and inside encoders for other
/// work) where the device has them, else wall time around submit and wait.
pub struct GpuTimer<'a> {
    device: &'a wgpu::Device,
    queue: &'a wgpu::Queue,
    queries: Option<(wgpu::QuerySet, wgpu::Buffer, wgpu::Buffer)>,
    inside_encoders: bool,
}

impl<'a> GpuTimer<'a> {
    pub fn new(device: &'a wgpu::Device, queue: &'a wgpu::Queue) -> Self {
        let queries = device.features().contains(wgpu::Features::TIMESTAMP_QUERY).then(|| {
            let set = device.create_query_set(&wgpu::QuerySetDescriptor {
                label: None,
                ty: wgpu::QueryType::Timestamp,
                count: 2,
            });
            let resolve = device.create_buffer(&wgpu::BufferDescriptor {
                label: None,
                size: 16,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            let read = device.create_buffer(&wgpu::BufferDescriptor {
                label: None,
                size: 16,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            (set, resolve, read)
        });
        let inside_encoders = device.features().contains(wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS);
        GpuTimer { device, queue, queries, inside_encoders }
    }

    /// "timestamp" or "wall": what the times of [`encoded`](Self::encoded) are.
    pub fn encoded_label(&self) -> &'static str {
        if self.queries.is_some() && self.inside_encoders {
            "timestamp"
        } else {
            "wall"
        }
    }

    /// "timestamp" or "wall": what the times of [`passes`](Self::passes) are.
    pub fn label(&self) -> &'static str {
        if self.queries.is_some() {
            "timestamp"
        } else {
            "wall"
        }
    }

    /// Times `n` compute passes back to back, one submit, from the first's start to the
    /// last's end, over `n`: `record` records each pass's work.
    pub fn passes(&self, n: usize, record: impl Fn(&mut wgpu::ComputePass<'_>)) -> Result<f64, Failed> {
        let mut enc = self.device.create_command_encoder(&Default::default());
        let set = self.queries.as_ref().map(|(set, _, _)| set);
        for i in 0..n {
            let timestamp_writes =
                set.zip(pass_timestamps(i, n)).map(|(set, (begin, end))| wgpu::ComputePassTimestampWrites {
                    query_set: set,
                    beginning_of_pass_write_index: begin,
                    end_of_pass_write_index: end,
                });
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: None, timestamp_writes });
            record(&mut pass);
        }
        Ok(self.finish(enc, set.is_some())? / n as f64)
    }

    /// Times `n` buffer copies back to back, over `n`.
    pub fn copies(&self, n: usize, src: &wgpu::Buffer, dst: &wgpu::Buffer, bytes: u64) -> Result<f64, Failed> {
        self.encoded(n, |enc| enc.copy_buffer_to_buffer(src, 0, dst, 0, bytes))
    }

    /// Times `n` runs of `record` (any work it records into an encoder) back to back, one
    /// submit, over `n`: timestamps written in the encoder around them where the device has
    /// `TIMESTAMP_QUERY_INSIDE_ENCODERS`, else wall time.
    pub fn encoded(&self, n: usize, record: impl Fn(&mut wgpu::CommandEncoder)) -> Result<f64, Failed> {
        let mut enc = self.device.create_command_encoder(&Default::default());
        let set = self.queries.as_ref().filter(|_| self.inside_encoders).map(|(set, _, _)| set);
        if let Some(set) = set {
            enc.write_timestamp(set, 0);
        }
        for _ in 0..n {
            record(&mut enc);
        }
        if let Some(set) = set {
            enc.write_timestamp(set, 1);
        }
        Ok(self.finish(enc, set.is_some())? / n as f64)
    }

    /// Submits `enc` and waits: the time between its two timestamps where it wrote them, else
    /// wall time around the submit and wait.
    fn finish(&self, mut enc: wgpu::CommandEncoder, timestamps: bool) -> Result<f64, Failed> {
        let device = self.device;
        let wait = || {
            device.poll(wgpu::PollType::wait_indefinitely()).map(drop).map_err(|e| format!("waiting for the GPU: {e}"))
        };
        match (&self.queries, timestamps) {
            (Some((set, resolve, read)), true) => {
                enc.resolve_query_set(set, 0..2, resolve, 0);
                enc.copy_buffer_to_buffer(resolve, 0, read, 0, 16);
                self.queue.submit([enc.finish()]);
                read.slice(..).map_async(wgpu::MapMode::Read, |_| {});
                wait()?;
                let ticks: [u64; 2] = {
                    let mapped =
                        read.slice(..).get_mapped_range().map_err(|e| format!("reading the timestamps: {e}"))?;
                    bytemuck::pod_read_unaligned(&mapped[..16])
                };
                read.unmap();
                Ok(ticks[1].saturating_sub(ticks[0]) as f64 * self.queue.get_timestamp_period() as f64 / 1e6)
            }
            _ => {
                let t = Instant::now();
                self.queue.submit([enc.finish()]);
                wait()?;
                Ok(t.elapsed().as_secs_f64() * 1e3)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_aim_at_the_batch_time() {
        assert_eq!(batch_size(0.3, 1.0), 4); // 1.2 ms
        assert_eq!(batch_size(0.25, 1.0), 4);
        assert_eq!(batch_size(1.0, 20.0), 20);
        assert_eq!(batch_size(0.007, 20.0), 2858); // an H200's 8 us pad
        assert_eq!(batch_size(120.0, 20.0), 1); // lavapipe's large pads: no repeats
        assert_eq!(batch_size(0.001, 20.0), BATCH_MAX); // capped
        assert_eq!(batch_size(0.0, 20.0), BATCH_MAX);
        assert_eq!(batch_size(f64::NAN, 20.0), BATCH_MAX);
    }

    /// Only the first pass writes a beginning and only the last an end; a pass between them
    /// writes none (wgpu rejects a write naming neither index: the batch bug of 5835660).
    #[test]
    fn a_batch_writes_two_timestamps_in_all() {
        assert_eq!(pass_timestamps(0, 1), Some((Some(0), Some(1))));
        assert_eq!(pass_timestamps(0, 3), Some((Some(0), None)));
        assert_eq!(pass_timestamps(1, 3), None);
        assert_eq!(pass_timestamps(2, 3), Some((None, Some(1))));
    }

    /// The warm-up spends at least its GPU time before the batch is sized, and sizes it
    /// from a warm time.
    #[test]
    fn the_warm_up_runs_its_time_then_sizes_from_a_warm_batch() {
        let calls = std::cell::RefCell::new(Vec::new());
        // A GPU whose dispatches take 2 ms cold (the first 10 ms) and 0.5 ms warm.
        let time = |n: usize| {
            let spent: f64 = calls.borrow().iter().map(|&(n, t)| n as f64 * t).sum();
            let t = if spent < 10.0 { 2.0 } else { 0.5 };
            calls.borrow_mut().push((n, t));
            Ok(t)
        };
        let batch = steady_batch(&Steady { warmup_ms: 100.0, batch_ms: 20.0 }, time).unwrap();
        assert_eq!(batch, 40, "sized from the warm 0.5 ms");
        let calls = calls.into_inner();
        let before_sizing: f64 = calls[..calls.len() - 1].iter().map(|&(n, t)| n as f64 * t).sum();
        assert!(before_sizing >= 100.0, "{before_sizing} ms of warm-up");
        // A timer that sees nothing ends its warm-up all the same.
        assert_eq!(steady_batch(&Steady { warmup_ms: 100.0, batch_ms: 20.0 }, |_| Ok(0.0)).unwrap(), BATCH_MAX);
    }
}
