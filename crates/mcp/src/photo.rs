//! `get_photo`: a photo's bytes read by seeking to them and verified against their blake3, as
//! every media answer is, then scaled down with the `image` crate when asked, or when they are
//! over what a model's API takes in one image.
//!
//! What it costs is bounded before any pixel is decoded: the header's declared size is checked
//! against [`DECODE_PIXELS_MAX`], the decoder runs under [`DECODE_ALLOC_MAX`], scaling makes an
//! image no larger than the decoded one, and one photo is read and scaled at a time. Bytes that
//! are not a PNG, JPEG, GIF or WebP image (an SVG, a torn file) are never given as an image.

use std::io::{Cursor, Read as _};
use std::sync::{Mutex, PoisonError};

use rmcp::model::{CallToolResult, ContentBlock as Content};

use scrollback_core::codec::scan::MediaKind;
use scrollback_core::error::{Error, Result};
use scrollback_read::media::{self, MediaRecord};

/// The largest image the model APIs take (Anthropic's is 5 MB): larger ones are scaled down.
pub const API_IMAGE_MAX: u64 = 5 * 1024 * 1024;
/// The longer side a photo over [`API_IMAGE_MAX`] is scaled to when no size is asked.
pub const DEFAULT_DIMENSION: u32 = 2048;
/// The largest photo read at all (decoded bytes).
pub const READ_MAX: u64 = 64 << 20;
/// The most pixels a photo may declare to be decoded and scaled (50 MP: a 48-megapixel phone
/// photo); one that declares more (a decompression bomb: a GIF of 41 bytes may claim 16000×16000)
/// is refused from its header, before it is decoded.
pub const DECODE_PIXELS_MAX: u64 = 50_000_000;
/// The most pixels on either side decoded.
const DECODE_SIDE_MAX: u32 = 20_000;
/// The most memory the decoder may take (its own count, its buffers included): a 50 MP photo
/// of 8-bit RGBA takes 200 MB.
pub const DECODE_ALLOC_MAX: u64 = 256 << 20;

/// One photo read and scaled at a time: with the bounds above, that one holds at most its bytes
/// (64 MiB) or their decoded pixels (256 MiB), the scaled pixels (no more than the decoded ones)
/// and their encoding, about 700 MB at worst; others wait their turn.
static TURN: Mutex<()> = Mutex::new(());

/// A photo ready to answer with.
#[derive(Debug)]
pub struct Photo {
    bytes: Vec<u8>,
    mime: String,
    about: String,
}

impl Photo {
    /// The tool result: a line saying what it is, and the image.
    pub fn into_result(self) -> CallToolResult {
        let data = base64_simd::STANDARD.encode_to_string(&self.bytes);
        CallToolResult::success(vec![Content::text(self.about), Content::image(data, self.mime)])
    }
}

fn limits() -> image::Limits {
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(DECODE_SIDE_MAX);
    limits.max_image_height = Some(DECODE_SIDE_MAX);
    limits.max_alloc = Some(DECODE_ALLOC_MAX);
    limits
}

fn reader(bytes: &[u8]) -> Option<image::ImageReader<Cursor<&[u8]>>> {
    let mut reader = image::ImageReader::new(Cursor::new(bytes)).with_guessed_format().ok()?;
    reader.format()?;
    reader.limits(limits());
    Some(reader)
}

/// The photo `record` names, scaled to fit `max_dimension` if given (and larger), or to
/// [`DEFAULT_DIMENSION`] if it is over [`API_IMAGE_MAX`].
pub fn get(record: &MediaRecord, max_dimension: Option<u32>) -> Result<Photo> {
    let media_type = record.media_type.clone().unwrap_or_default();
    if record.kind != MediaKind::Image && !media_type.starts_with("image/") {
        return Err(Error::BadQuery(format!(
            "{} is a {} ({}), not a photo",
            record.blake3,
            record.kind.as_str(),
            if media_type.is_empty() { "of no recorded type" } else { &media_type }
        )));
    }
    if record.decoded_length > READ_MAX {
        return Err(Error::TooLarge(format!(
            "this photo is {} bytes; get_photo reads at most {READ_MAX}",
            record.decoded_length
        )));
    }
    if !record.file_live {
        return Err(Error::Gone { path: record.path.clone(), offset: record.offset });
    }
    let _turn = TURN.lock().unwrap_or_else(PoisonError::into_inner);
    let mut bytes = Vec::with_capacity(record.decoded_length as usize);
    // Read to its end: the reader checks the blake3 there, and fails rather than give other bytes.
    media::open(record)?.read_to_end(&mut bytes).map_err(|e| media::into_error(e, record))?;
    let name = record.reference().map_or_else(|| record.blake3.clone(), |r| r.to_string());
    answer(bytes, &name, &media_type, &record.blake3, max_dimension)
}

/// The answer for a photo's verified `bytes`, named `name`.
fn answer(bytes: Vec<u8>, name: &str, media_type: &str, blake3: &str, max_dimension: Option<u32>) -> Result<Photo> {
    // What the bytes are, from their header alone: an image format that can be decoded, and its size.
    let header = reader(&bytes).and_then(|r| Some((r.format()?, r.into_dimensions().ok()?)));
    let Some((format, (width, height))) = header else {
        return Err(Error::BadQuery(format!(
            "photo {name} ({}) is not an image that can be shown: its bytes are not a whole PNG, JPEG, GIF or WebP header",
            if media_type.is_empty() { "of no recorded type" } else { media_type }
        )));
    };
    let mime = format.to_mime_type().to_owned();
    let length = bytes.len();
    let target = match max_dimension {
        Some(max) => (width.max(height) > max).then_some(max),
        None => (length as u64 > API_IMAGE_MAX).then_some(DEFAULT_DIMENSION),
    };
    let Some(target) = target else {
        let about = format!("photo {name}: {mime}, {width}×{height}, {length} bytes, blake3 {blake3} (verified)");
        return Ok(Photo { bytes, mime, about });
    };
    let pixels = u64::from(width) * u64::from(height);
    if pixels > DECODE_PIXELS_MAX || width.max(height) > DECODE_SIDE_MAX {
        return Err(Error::TooLarge(format!(
            "photo {name} declares {width}×{height} pixels; get_photo scales photos of at most {} megapixels and {DECODE_SIDE_MAX} pixels a side (ask without max_dimension for its bytes as they are, if under 5 MB)",
            DECODE_PIXELS_MAX / 1_000_000
        )));
    }
    let image = reader(&bytes)
        .ok_or_else(|| Error::BadQuery(format!("photo {name} ({mime}) is of a type that cannot be scaled here")))?
        .decode()
        .map_err(|e| match e {
            image::ImageError::Limits(_) => Error::TooLarge(format!(
                "photo {name} ({width}×{height}) needs more memory to decode than get_photo gives one photo: {e}"
            )),
            e => Error::BadQuery(format!("photo {name} cannot be decoded to scale it: {e}")),
        })?;
    drop(bytes);
    let (scaled, scaled_mime, (w, h)) = scale(&image, target)?;
    let about = format!(
        "photo {name}: {mime}, {width}×{height}, {length} bytes, blake3 {blake3} (verified); scaled down to {w}×{h} as {scaled_mime}, {} bytes",
        scaled.len()
    );
    Ok(Photo { bytes: scaled, mime: scaled_mime.to_owned(), about })
}

/// `image` fitted within `target` pixels on its longer side and encoded (PNG where it has
/// transparency, JPEG otherwise), smaller still until it is under [`API_IMAGE_MAX`]. Scaled by
/// averaging (`thumbnail`), which holds no buffer but the scaled image.
fn scale(image: &image::DynamicImage, mut target: u32) -> Result<(Vec<u8>, &'static str, (u32, u32))> {
    let failed = |e: image::ImageError| Error::Internal(format!("encoding the scaled photo: {e}"));
    loop {
        let small =
            if image.width().max(image.height()) > target { image.thumbnail(target, target) } else { image.clone() };
        let mut out = Vec::new();
        let mime = if small.color().has_alpha() {
            small.write_to(&mut Cursor::new(&mut out), image::ImageFormat::Png).map_err(failed)?;
            "image/png"
        } else {
            let encoder = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 85);
            small.to_rgb8().write_with_encoder(encoder).map_err(failed)?;
            "image/jpeg"
        };
        if out.len() as u64 <= API_IMAGE_MAX || target <= 256 {
            return Ok((out, mime, (small.width(), small.height())));
        }
        target = target * 3 / 4;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A GIF of 41 bytes (a two-colour table, one frame) whose screen and frame declare 16000×16000.
    fn gif_bomb() -> Vec<u8> {
        let side = 16_000u16.to_le_bytes();
        let mut g = b"GIF89a".to_vec();
        g.extend(side);
        g.extend(side);
        g.extend([0x80, 0, 0, 0, 0, 0, 255, 255, 255, 0x2c, 0, 0, 0, 0]);
        g.extend(side);
        g.extend(side);
        g.extend([0, 2, 2, 0x4c, 0x01, 0, 0x3b]);
        g
    }

    /// A PNG of a few hundred KB that decompresses to 100 MP of grey.
    fn png_bomb() -> Vec<u8> {
        let side = 10_000u32;
        let pixels = vec![0u8; (side * side) as usize];
        let mut out = Vec::new();
        let encoder = image::codecs::png::PngEncoder::new_with_quality(
            &mut out,
            image::codecs::png::CompressionType::Fast,
            image::codecs::png::FilterType::NoFilter,
        );
        image::ImageEncoder::write_image(encoder, &pixels, side, side, image::ExtendedColorType::L8).unwrap();
        out
    }

    /// A JPEG's header (about 1 KB: its tables and frame) declaring 16000×16000, and the start of
    /// its scan.
    fn jpeg_header() -> Vec<u8> {
        let mut out = Vec::new();
        let small = image::RgbImage::from_pixel(8, 8, image::Rgb([200, 10, 10]));
        small.write_with_encoder(image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 90)).unwrap();
        let at = |out: &[u8], marker: u8| out.windows(2).position(|w| w == [0xff, marker]).unwrap();
        let sof = at(&out, 0xc0);
        out[sof + 5..sof + 7].copy_from_slice(&16_000u16.to_be_bytes());
        out[sof + 7..sof + 9].copy_from_slice(&16_000u16.to_be_bytes());
        let sos = at(&out, 0xda);
        let len = u16::from_be_bytes([out[sos + 2], out[sos + 3]]) as usize;
        out.truncate(sos + 2 + len + 4);
        out
    }

    fn small_png() -> Vec<u8> {
        let mut out = Vec::new();
        let img = image::RgbaImage::from_pixel(300, 200, image::Rgba([1, 2, 3, 128]));
        img.write_to(&mut Cursor::new(&mut out), image::ImageFormat::Png).unwrap();
        out
    }

    #[test]
    fn a_photo_declaring_too_many_pixels_is_refused_before_it_is_decoded() {
        for (what, bytes, mime) in
            [("png", png_bomb(), "image/png"), ("jpeg", jpeg_header(), "image/jpeg"), ("gif", gif_bomb(), "image/gif")]
        {
            assert!(bytes.len() < 1 << 20, "{what}: {} bytes", bytes.len());
            for max in [Some(64), None] {
                // Unscaled, a small bomb is given back as it is (nothing decoded); scaled, refused.
                let answer = answer(bytes.clone(), what, mime, "hash", max);
                match max {
                    Some(_) => match answer {
                        Err(Error::TooLarge(message)) => assert!(message.contains("pixels"), "{what}: {message}"),
                        other => panic!("{what}: {:?}", other.map(|p| p.about)),
                    },
                    None => assert_eq!(answer.unwrap().bytes, bytes, "{what}"),
                }
            }
        }
    }

    #[test]
    fn svg_and_undecodable_bytes_are_not_given_as_images() {
        let svg = br#"<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"></svg>"#.to_vec();
        let garbage = b"\x89PNG\r\n\x1a\nnot really a png at all".to_vec();
        let random: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        for (what, bytes, mime) in
            [("svg", svg, "image/svg+xml"), ("torn png", garbage, "image/png"), ("noise", random, "image/jpeg")]
        {
            for max in [None, Some(64)] {
                match answer(bytes.clone(), what, mime, "hash", max) {
                    Err(Error::BadQuery(message)) => assert!(message.contains(what), "{message}"),
                    other => panic!("{what} {max:?}: {:?}", other.map(|p| p.about)),
                }
            }
        }
    }

    #[test]
    fn an_ordinary_photo_is_given_and_scaled() {
        let png = small_png();
        let photo = answer(png.clone(), "p", "image/png", "hash", None).unwrap();
        assert_eq!((photo.bytes, photo.mime.as_str()), (png.clone(), "image/png"));
        let photo = answer(png, "p", "image/png", "hash", Some(30)).unwrap();
        let scaled = image::load_from_memory(&photo.bytes).unwrap();
        assert_eq!((scaled.width(), scaled.height()), (30, 20), "{}", photo.about);
    }
}
