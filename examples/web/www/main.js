// The demo's page: loads an image (sample.png unless one is picked), pads it in each mode on
// WebGPU and on the wasm CPU path, draws input and outputs, and times both.
// Pads negative crop. The query string can set them: ?pads=top,left,bottom,right&value=v.
// For scripted checks, `window.demoResult` holds every output's bytes from both paths.
import init, { createPadder, modes, padCpu } from './pkg/wgpu_pad_web.js';

const RUNS = 5; // timed runs per path, after one warm-up run; the median is shown
const $ = (id) => document.getElementById(id);

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1];
}

async function loadImage(src) {
  const img = new Image();
  img.src = src;
  await img.decode();
  const canvas = document.createElement('canvas');
  canvas.width = img.naturalWidth;
  canvas.height = img.naturalHeight;
  const ctx = canvas.getContext('2d');
  ctx.drawImage(img, 0, 0);
  const { data } = ctx.getImageData(0, 0, canvas.width, canvas.height);
  return { rgba: new Uint8Array(data.buffer), width: canvas.width, height: canvas.height };
}

function figure(caption, width, height, rgba) {
  const fig = document.createElement('figure');
  const canvas = document.createElement('canvas');
  canvas.width = width;
  canvas.height = height;
  canvas.style.width = `${width * 2}px`;
  if (width > 0 && height > 0) {
    canvas.getContext('2d').putImageData(new ImageData(new Uint8ClampedArray(rgba), width, height), 0, 0);
  }
  const cap = document.createElement('figcaption');
  cap.textContent = caption;
  fig.append(canvas, cap);
  $('grid').append(fig);
  return cap;
}

function toBase64(bytes) {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

async function run(padder, image) {
  const pads = ['top', 'left', 'bottom', 'right'].map((id) => Number($(id).value));
  const value = Number($('value').value);
  const [top, left, bottom, right] = pads;
  const width = image.width + left + right;
  const height = image.height + top + bottom;
  $('grid').replaceChildren();
  figure(`input ${image.width}×${image.height}`, image.width, image.height, image.rgba);
  const all = modes(); // the crate's Mode::ALL
  const result = { adapter: padder ? padder.adapter() : null, pads, value, width, height, all, modes: {} };
  let allEqual = true;
  for (const mode of all) {
    let cpu, cpuTimes = [];
    for (let i = 0; i <= RUNS; i++) {
      const t = performance.now();
      cpu = padCpu(image.rgba, image.height, image.width, mode, Int32Array.from(pads), value);
      if (i > 0) cpuTimes.push(performance.now() - t);
    }
    let gpu = null, gpuTimes = [], error = null;
    if (padder) {
      try {
        for (let i = 0; i <= RUNS; i++) {
          const t = performance.now();
          gpu = await padder.padGpu(image.rgba, image.height, image.width, mode, Int32Array.from(pads), value);
          if (i > 0) gpuTimes.push(performance.now() - t);
        }
      } catch (e) {
        error = String(e);
      }
    }
    const equal = gpu !== null && gpu.length === cpu.length && gpu.every((b, i) => b === cpu[i]);
    allEqual &&= equal;
    const timing = gpu
      ? `GPU (WebGPU, upload+pad+readback) ${median(gpuTimes).toFixed(2)} ms\n`
      : `GPU: ${error ?? 'no WebGPU'}\n`;
    const cap = figure(
      `${mode} → ${width}×${height}\n${timing}CPU (wasm, one thread) ${median(cpuTimes).toFixed(2)} ms\n` +
        `GPU output equals CPU output: ${equal ? 'yes' : 'NO'}`,
      width, height, gpu ?? cpu);
    if (!equal) cap.classList.add('bad');
    result.modes[mode] = {
      gpuMs: gpu ? median(gpuTimes) : null,
      cpuMs: median(cpuTimes),
      equal,
      error,
      gpu: gpu ? toBase64(gpu) : null,
      cpu: toBase64(cpu),
    };
  }
  result.allEqual = allEqual;
  $('status').textContent = allEqual
    ? `done: all ${all.length} modes, GPU output equals the CPU path's, byte for byte`
    : 'done: the GPU and CPU outputs differ, or the GPU path failed (see above)';
  $('status').className = allEqual ? '' : 'bad';
  window.demoResult = result;
}

async function main() {
  await init();
  const params = new URLSearchParams(location.search);
  if (params.has('pads')) {
    params.get('pads').split(',').forEach((v, i) => ($(['top', 'left', 'bottom', 'right'][i]).value = v));
  }
  if (params.has('value')) $('value').value = params.get('value');
  let padder = null;
  try {
    padder = await createPadder();
    $('adapter').textContent = `WebGPU adapter: ${padder.adapter()}`;
  } catch (e) {
    $('adapter').textContent = `WebGPU unavailable (${e}); the CPU path still runs`;
    $('adapter').className = 'bad';
  }
  let image = await loadImage('sample.png');
  const go = () => run(padder, image).catch((e) => {
    $('status').textContent = `error: ${e}`;
    $('status').className = 'bad';
    window.demoResult = { error: String(e) };
  });
  $('controls').addEventListener('submit', (ev) => { ev.preventDefault(); go(); });
  $('file').addEventListener('change', async () => {
    const file = $('file').files[0];
    if (file) {
      image = await loadImage(URL.createObjectURL(file));
      go();
    }
  });
  await go();
}

main();
