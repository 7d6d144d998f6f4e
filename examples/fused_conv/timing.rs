//! Steady GPU times for the fused convolution's comparison: timestamps written into the
//! encoder around a batch of runs where the device has them (`TIMESTAMP_QUERY_INSIDE_ENCODERS`,
//! which `GpuContext` asks for), else wall time around its submit and wait; each load warmed
//! up first, then timed in batches of about `BATCH_MS`.

/// GPU time each load runs before it is timed, so that clocks and caches settle.
pub const WARMUP_MS: f64 = 200.0;
/// About how long a timed batch runs.
pub const BATCH_MS: f64 = 20.0;
/// Runs a batch holds at most.
pub const BATCH_MAX: usize = 4096;

/// Runs in a batch of about `batch_ms`, given one warm run's time: 1 to [`BATCH_MAX`]
/// (BATCH_MAX where the time is 0 or not a number: a timer too coarse to see one run).
pub fn batch_runs(single_ms: f64, batch_ms: f64) -> usize {
    if single_ms.is_nan() || single_ms <= 0.0 {
        return BATCH_MAX;
    }
    ((batch_ms / single_ms).ceil() as usize).clamp(1, BATCH_MAX)
}

/// Times batches of GPU work on one device.
pub struct Timer<'a> {
    device: &'a wgpu::Device,
    queue: &'a wgpu::Queue,
    /// The query set (two timestamps), its resolve buffer and a mappable copy.
    queries: Option<(wgpu::QuerySet, wgpu::Buffer, wgpu::Buffer)>,
}

impl<'a> Timer<'a> {
    pub fn new(device: &'a wgpu::Device, queue: &'a wgpu::Queue) -> Timer<'a> {
        let wanted = wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS;
        let queries = device.features().contains(wanted).then(|| {
            let set = device.create_query_set(&wgpu::QuerySetDescriptor {
                label: None,
                ty: wgpu::QueryType::Timestamp,
                count: 2,
            });
            let buffer = |usage| {
                device.create_buffer(&wgpu::BufferDescriptor {
                    label: None,
                    size: 16,
                    usage,
                    mapped_at_creation: false,
                })
            };
            let resolve = buffer(wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC);
            let read = buffer(wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST);
            (set, resolve, read)
        });
        Timer { device, queue, queries }
    }

    /// "timestamp" or "wall": what the times are.
    pub fn label(&self) -> &'static str {
        if self.queries.is_some() {
            "timestamp"
        } else {
            "wall"
        }
    }

    /// Milliseconds a run takes: `n` runs recorded by `record` back to back in one submit,
    /// timed together, over `n`.
    pub fn per_run(&self, n: usize, record: impl Fn(&mut wgpu::CommandEncoder)) -> f64 {
        let mut enc = self.device.create_command_encoder(&Default::default());
        if let Some((set, _, _)) = &self.queries {
            enc.write_timestamp(set, 0);
        }
        for _ in 0..n {
            record(&mut enc);
        }
        let wait = || self.device.poll(wgpu::PollType::wait_indefinitely()).expect("the device's poll");
        let ms = match &self.queries {
            Some((set, resolve, read)) => {
                enc.write_timestamp(set, 1);
                enc.resolve_query_set(set, 0..2, resolve, 0);
                enc.copy_buffer_to_buffer(resolve, 0, read, 0, 16);
                self.queue.submit([enc.finish()]);
                read.slice(..).map_async(wgpu::MapMode::Read, |_| {});
                wait();
                let ticks: [u64; 2] =
                    bytemuck::pod_read_unaligned(&read.slice(..).get_mapped_range().expect("the mapped timestamps"));
                read.unmap();
                ticks[1].saturating_sub(ticks[0]) as f64 * self.queue.get_timestamp_period() as f64 * 1e-6
            }
            None => {
                let start = std::time::Instant::now();
                self.queue.submit([enc.finish()]);
                wait();
                start.elapsed().as_secs_f64() * 1e3
            }
        };
        ms / n as f64
    }

    /// Warms `record` up for [`WARMUP_MS`] of its time (doubling its batch), then sizes a
    /// batch to about [`BATCH_MS`] from a warm one.
    pub fn steady_batch(&self, record: impl Fn(&mut wgpu::CommandEncoder)) -> usize {
        let (mut spent, mut n) = (0.0, 1);
        // Bounded: a timer that sees nothing (0) must not spin.
        for _ in 0..32 {
            if spent >= WARMUP_MS {
                break;
            }
            spent += self.per_run(n, &record) * n as f64;
            n = (n * 2).min(BATCH_MAX);
        }
        let probe = n.clamp(1, 16);
        batch_runs(self.per_run(probe, &record), BATCH_MS)
    }
}
