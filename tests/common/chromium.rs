//! Headless Chromium, as people see the project's pages: a screenshot read back as pixels.

use std::path::Path;
use std::process::Command;

/// Renders `html` with headless Chromium at `width` × `height` CSS pixels (scale 1); `None`
/// when Chromium is not installed.
pub fn screenshot(html: &Path, width: u32, height: u32) -> Option<(Vec<u8>, u32, u32)> {
    if Command::new("chromium").arg("--version").output().is_err() {
        eprintln!("skipped: chromium is not installed (installed by .ci/setup)");
        return None;
    }
    let png = html.with_extension("png");
    let out = Command::new("timeout")
        .arg("120")
        .arg("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
            &format!("--window-size={width},{height}"),
            &format!("--screenshot={}", png.display()),
        ])
        .arg(html)
        .output()
        .expect("run chromium");
    assert!(
        out.status.success(),
        "chromium: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(&png).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut pixels).unwrap();
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    let channels = info.color_type.samples();
    let rgb = pixels[..info.buffer_size()]
        .chunks(channels)
        .flat_map(|p| [p[0], p[1], p[2]])
        .collect();
    Some((rgb, info.width, info.height))
}
