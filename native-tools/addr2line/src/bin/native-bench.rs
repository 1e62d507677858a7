//! The same lookup code built natively (x86_64), for the benchmark's WASM-vs-native comparison.
//! Usage: native-bench <elf file> <file with one hex address per line>
//! Prints one JSON line: loadMs, coldMs, warmMs, frames.
//! Built by bench/symbolize-bench.mjs with `cargo build --release --bin native-bench --target x86_64-unknown-linux-gnu`;
//! never part of the WASM module.

#[path = "../lib.rs"]
#[allow(dead_code)]
mod a2l;

use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        eprintln!("usage: native-bench <elf file> <addresses file>");
        std::process::exit(2);
    }
    let data = std::fs::read(&args[1]).expect("read elf");
    let addrs: Vec<u64> = std::fs::read_to_string(&args[2])
        .expect("read addresses")
        .lines()
        .filter_map(|l| u64::from_str_radix(l.trim().trim_start_matches("0x"), 16).ok())
        .collect();
    let t0 = Instant::now();
    let ptr = a2l::a2l_alloc(data.len());
    unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), ptr, data.len()) };
    drop(data);
    let h = a2l::a2l_load(ptr, std::fs::metadata(&args[1]).unwrap().len() as usize);
    assert!(h != 0, "load failed");
    let t1 = Instant::now();
    let mut frames = 0u64;
    for chunk in addrs.chunks(4096) {
        let r = a2l::a2l_lookup(h, chunk.as_ptr(), chunk.len(), 7);
        frames += unsafe { u32::from_le_bytes(*(r.add(4) as *const [u8; 4])) } as u64;
    }
    let t2 = Instant::now();
    for chunk in addrs.chunks(4096) {
        a2l::a2l_lookup(h, chunk.as_ptr(), chunk.len(), 7);
    }
    let t3 = Instant::now();
    let ms = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1000.0;
    println!(
        "{{\"loadMs\":{:.1},\"coldMs\":{:.1},\"warmMs\":{:.1},\"frames\":{}}}",
        ms(t0, t1),
        ms(t1, t2),
        ms(t2, t3),
        frames
    );
}
