//! `get_photo`: a photo's bytes read by seeking to them and verified against their blake3, as
//! every media answer is, then scaled down with the `image` crate when asked, or when they are
//! over what a model's API takes in one image.

use std::io::{Cursor, Read as _};

use rmcp::model::{CallToolResult, ContentBlock as Content};

use scrollback_core::codec::scan::MediaKind;
use scrollback_core::error::{Error, Result};
use scrollback_read::media::{self, MediaRecord};

/// The largest image the model APIs take (Anthropic's is 5 MB): larger ones are scaled down.
pub const API_IMAGE_MAX: u64 = 5 * 1024 * 1024;
/// The longer side a photo over [`API_IMAGE_MAX`] is scaled to when no size is asked.
pub const DEFAULT_DIMENSION: u32 = 2048;
/// The largest photo read at all (decoded bytes).
const READ_MAX: u64 = 64 << 20;
/// The most pixels on either side decoded, and the most memory a decode may take: a photo that
/// claims more (a decompression bomb) is refused before it is decoded.
const DECODE_SIDE_MAX: u32 = 20_000;
const DECODE_ALLOC_MAX: u64 = 1 << 30;

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
    let mut bytes = Vec::with_capacity(record.decoded_length as usize);
    // Read to its end: the reader checks the blake3 there, and fails rather than give other bytes.
    media::open(record)?.read_to_end(&mut bytes).map_err(|e| media::into_error(e, record))?;
    let name = record.reference().map_or_else(|| record.blake3.clone(), |r| r.to_string());
    let dimensions = reader(&bytes).and_then(|r| r.into_dimensions().ok());
    let mime = reader(&bytes)
        .and_then(|r| r.format())
        .map(|f| f.to_mime_type().to_owned())
        .unwrap_or_else(|| if media_type.is_empty() { "application/octet-stream".into() } else { media_type.clone() });
    let size = |d: Option<(u32, u32)>| d.map_or_else(|| "size unknown".to_owned(), |(w, h)| format!("{w}×{h}"));
    let target = match max_dimension {
        Some(max) => dimensions.is_some_and(|(w, h)| w.max(h) > max).then_some(max),
        None => (record.decoded_length > API_IMAGE_MAX).then_some(DEFAULT_DIMENSION),
    };
    let Some(target) = target else {
        let about = format!(
            "photo {name}: {mime}, {}, {} bytes, blake3 {} (verified)",
            size(dimensions),
            bytes.len(),
            record.blake3
        );
        return Ok(Photo { bytes, mime, about });
    };
    let image = reader(&bytes)
        .ok_or_else(|| Error::BadQuery(format!("photo {name} ({mime}) is of a type that cannot be scaled here")))?
        .decode()
        .map_err(|e| Error::BadQuery(format!("photo {name} cannot be decoded to scale it: {e}")))?;
    let (scaled, scaled_mime, scaled_size) = scale(&image, target)?;
    let about = format!(
        "photo {name}: {mime}, {}, {} bytes, blake3 {} (verified); scaled down to {} as {scaled_mime}, {} bytes",
        size(dimensions),
        bytes.len(),
        record.blake3,
        size(Some(scaled_size)),
        scaled.len()
    );
    Ok(Photo { bytes: scaled, mime: scaled_mime.to_owned(), about })
}

/// `image` fitted within `target` pixels on its longer side and encoded (PNG where it has
/// transparency, JPEG otherwise), smaller still until it is under [`API_IMAGE_MAX`].
fn scale(image: &image::DynamicImage, mut target: u32) -> Result<(Vec<u8>, &'static str, (u32, u32))> {
    let failed = |e: image::ImageError| Error::Internal(format!("encoding the scaled photo: {e}"));
    loop {
        let small = if image.width().max(image.height()) > target {
            image.resize(target, target, image::imageops::FilterType::Triangle)
        } else {
            image.clone()
        };
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
