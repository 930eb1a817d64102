//! A send request, checked whole before anything is stored: ids, text, and each image (a base64
//! data URL of a raster type whose bytes are of that type).
//!
//! Every limit is a documented constant. Nothing here touches the disk: [`SendRequest::validate`]
//! turns a request into a [`CheckedSend`] holding the decoded images, or says what is wrong with it.

use serde::Deserialize;

use scrollback_core::codec::refs::ContentHash;
use scrollback_core::error::{Error, Result};

/// The longest `clientMessageId`, `chatId` or `sessionId`, in bytes.
pub const MAX_ID: usize = 128;
/// The longest message text, in bytes of UTF-8.
pub const MAX_TEXT: usize = 64 << 10;
/// The most images one message may carry.
pub const MAX_IMAGES: usize = 8;
/// The largest image, decoded: the Claude API's own limit for one image.
pub const MAX_IMAGE_BYTES: usize = 5 << 20;
/// The largest request body: every image at its largest, base64-encoded, plus the text escaped.
pub const MAX_BODY: u64 = (MAX_IMAGES * (MAX_IMAGE_BYTES / 3 * 4 + 4 + 64) + MAX_TEXT * 6 + 4096) as u64;

/// The image types a send may carry, with the bytes each must start with.
const IMAGE_TYPES: &[(&str, &[&[u8]])] = &[
    ("image/png", &[b"\x89PNG\r\n\x1a\n"]),
    ("image/jpeg", &[b"\xff\xd8\xff"]),
    ("image/gif", &[b"GIF87a", b"GIF89a"]),
    ("image/webp", &[b"RIFF"]),
];

/// `POST /api/chat/send`'s body, as sent.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SendRequest {
    /// The client's id for this message; a retry sends the same.
    pub client_message_id: String,
    /// The chat it belongs to.
    pub chat_id: String,
    /// The transcript session, when the client knows it.
    #[serde(default)]
    pub session_id: Option<String>,
    /// What the person typed (may be empty when images are sent).
    pub text: String,
    /// Images, as data URLs.
    #[serde(default)]
    pub images: Option<Vec<ImageInput>>,
}

/// One image of a send request.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ImageInput {
    /// `data:image/<type>;base64,<base64>`.
    pub url: String,
    /// The type, if the client states it; it must agree with the data URL's.
    #[serde(default)]
    pub mime_type: Option<String>,
}

/// A checked send, ready to be recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedSend {
    /// The client's id for this message.
    pub client_message_id: String,
    /// The chat.
    pub chat_id: String,
    /// The session the client named, if any.
    pub session_id: Option<String>,
    /// The text.
    pub text: String,
    /// The images, decoded, in order.
    pub images: Vec<Image>,
}

/// One decoded image.
#[derive(Clone, PartialEq, Eq)]
pub struct Image {
    /// Its media type (`image/png`, ...).
    pub media_type: &'static str,
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// blake3 of its bytes.
    pub blake3: ContentHash,
}

impl std::fmt::Debug for Image {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Image").field("media_type", &self.media_type).field("bytes", &self.bytes.len()).finish()
    }
}

/// Whether `s` can be a client-chosen id: 1 to [`MAX_ID`] bytes of letters, digits, `.`, `_`, `:`
/// and `-` (UUIDs, nanoids, ULIDs), and not a dot segment. No path character can pass.
pub fn is_client_id(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_ID
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"._:-".contains(&b))
        && s != "."
        && s != ".."
}

fn check_id(what: &str, s: &str) -> Result<()> {
    if is_client_id(s) {
        Ok(())
    } else {
        let shown: String = s.chars().take(40).collect();
        Err(Error::BadSend(format!("{what} {shown:?}: 1 to {MAX_ID} letters, digits, '.', '_', ':' or '-'")))
    }
}

impl SendRequest {
    /// Checks everything and decodes the images. A violation is [`Error::BadSend`], or
    /// [`Error::TooLarge`] for an image over its limit.
    pub fn validate(self) -> Result<CheckedSend> {
        check_id("clientMessageId", &self.client_message_id)?;
        check_id("chatId", &self.chat_id)?;
        if let Some(session) = &self.session_id {
            check_id("sessionId", session)?;
        }
        if self.text.len() > MAX_TEXT {
            return Err(Error::BadSend(format!("text is {} bytes; at most {MAX_TEXT}", self.text.len())));
        }
        let inputs = self.images.unwrap_or_default();
        if inputs.len() > MAX_IMAGES {
            return Err(Error::BadSend(format!("{} images; at most {MAX_IMAGES}", inputs.len())));
        }
        if self.text.trim().is_empty() && inputs.is_empty() {
            return Err(Error::BadSend("an empty message: send text, images or both".into()));
        }
        let images = inputs.iter().enumerate().map(|(i, input)| decode_image(i, input)).collect::<Result<_>>()?;
        Ok(CheckedSend {
            client_message_id: self.client_message_id,
            chat_id: self.chat_id,
            session_id: self.session_id,
            text: self.text,
            images,
        })
    }
}

/// Decodes image `i`: a base64 data URL of a known raster type, within size, whose bytes are that
/// type's.
fn decode_image(i: usize, input: &ImageInput) -> Result<Image> {
    let bad = |why: String| Error::BadSend(format!("images[{i}]: {why}"));
    let rest = match input.url.get(..5) {
        Some(scheme) if scheme.eq_ignore_ascii_case("data:") => &input.url[5..],
        _ => return Err(bad("url is not a data URL (data:image/<type>;base64,...)".into())),
    };
    let (header, data) = rest.split_once(',').ok_or_else(|| bad("data URL without a comma".into()))?;
    let declared = data_url_type(header).map_err(bad)?;
    let declared = if declared == "image/jpg" { "image/jpeg".to_owned() } else { declared };
    let (media_type, magic) = IMAGE_TYPES
        .iter()
        .find(|(t, _)| *t == declared)
        .ok_or_else(|| bad(format!("type {declared:?} is not one of PNG, JPEG, GIF or WebP")))?;
    if let Some(stated) = &input.mime_type {
        let stated = stated.to_ascii_lowercase();
        let stated = if stated == "image/jpg" { "image/jpeg".to_owned() } else { stated };
        if stated != *media_type {
            return Err(bad(format!("mimeType {stated:?} disagrees with the data URL's {media_type:?}")));
        }
    }
    if data.len() > MAX_IMAGE_BYTES.div_ceil(3) * 4 {
        return Err(Error::TooLarge(format!(
            "images[{i}] is over {} MiB decoded; at most {MAX_IMAGE_BYTES} bytes",
            MAX_IMAGE_BYTES >> 20
        )));
    }
    let bytes = base64_simd::STANDARD
        .decode_to_vec(data)
        .or_else(|_| base64_simd::STANDARD_NO_PAD.decode_to_vec(data))
        .map_err(|_| bad("the data is not base64".into()))?;
    if bytes.is_empty() {
        return Err(bad("the image is empty".into()));
    }
    if bytes.len() > MAX_IMAGE_BYTES {
        return Err(Error::TooLarge(format!(
            "images[{i}] is {} bytes decoded; at most {MAX_IMAGE_BYTES}",
            bytes.len()
        )));
    }
    let webp_ok = *media_type != "image/webp" || bytes.get(8..12) == Some(b"WEBP");
    if !magic.iter().any(|m| bytes.starts_with(m)) || !webp_ok {
        return Err(bad(format!("the bytes are not {media_type}")));
    }
    let blake3 = ContentHash::of(&bytes);
    Ok(Image { media_type, bytes, blake3 })
}

/// The media type of a data URL's header (what is between `data:` and the comma), lower-cased. As
/// RFC 2397 has it, `<type>/<subtype>` may be followed by `;attribute=value` parameters (`charset=`
/// among them), and the header ends with `;base64`; names and `base64` are case-insensitive.
fn data_url_type(header: &str) -> std::result::Result<String, String> {
    let mut parts = header.split(';');
    let declared = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
    let params: Vec<&str> = parts.collect();
    match params.split_last() {
        Some((last, rest)) if last.trim().eq_ignore_ascii_case("base64") => {
            if let Some(odd) = rest.iter().find(|p| !matches!(p.split_once('='), Some((n, _)) if !n.trim().is_empty()))
            {
                return Err(format!("data URL parameter {odd:?} is not attribute=value"));
            }
            Ok(declared)
        }
        _ => Err("data URL is not base64 (…;base64,)".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

    fn request(images: Vec<ImageInput>) -> SendRequest {
        SendRequest {
            client_message_id: "m-1".into(),
            chat_id: "c-1".into(),
            session_id: None,
            text: "hello".into(),
            images: Some(images),
        }
    }

    fn data_url(media_type: &str, bytes: &[u8]) -> String {
        format!("data:{media_type};base64,{}", base64_simd::STANDARD.encode_to_string(bytes))
    }

    #[test]
    fn a_png_data_url_decodes_and_hashes() {
        let send = request(vec![ImageInput { url: data_url("image/png", PNG), mime_type: Some("image/png".into()) }])
            .validate()
            .unwrap();
        assert_eq!(send.images[0].bytes, PNG);
        assert_eq!(send.images[0].blake3, ContentHash::of(PNG));
    }

    /// RFC 2397: `;base64` and the media type's name are case-insensitive, and parameters such as
    /// `;charset=` may come before `;base64` (#22).
    #[test]
    fn data_urls_take_rfc_2397_parameters_in_any_case() {
        let encoded = base64_simd::STANDARD.encode_to_string(PNG);
        for header in [
            "image/png;BASE64",
            "IMAGE/PNG;Base64",
            "image/png;charset=utf-8;base64",
            "image/png;name=a.png;charset=US-ASCII;base64",
        ] {
            let upper =
                request(vec![ImageInput { url: format!("DATA:{header},{encoded}"), mime_type: None }]).validate();
            assert!(upper.is_ok(), "DATA:{header}");
            let send =
                request(vec![ImageInput { url: format!("data:{header},{encoded}"), mime_type: None }]).validate();
            assert_eq!(send.map(|s| s.images[0].media_type).ok(), Some("image/png"), "{header}");
        }
        for header in [
            "image/png;base64;charset=utf-8",
            "image/png;odd;base64",
            "image/png;=x;base64",
            "image/png;charset=utf-8",
            "image/png",
        ] {
            let send =
                request(vec![ImageInput { url: format!("data:{header},{encoded}"), mime_type: None }]).validate();
            assert!(matches!(send, Err(Error::BadSend(_))), "{header}");
        }
    }

    #[test]
    fn what_is_refused() {
        let cases: Vec<(&str, SendRequest)> = vec![
            ("not a data url", request(vec![ImageInput { url: "https://x/y.png".into(), mime_type: None }])),
            ("not base64", request(vec![ImageInput { url: "data:image/png;base64,@@@@".into(), mime_type: None }])),
            ("svg", request(vec![ImageInput { url: data_url("image/svg+xml", b"<svg/>"), mime_type: None }])),
            ("wrong magic", request(vec![ImageInput { url: data_url("image/jpeg", PNG), mime_type: None }])),
            (
                "disagreeing type",
                request(vec![ImageInput { url: data_url("image/png", PNG), mime_type: Some("image/gif".into()) }]),
            ),
            ("too many", request(vec![ImageInput { url: data_url("image/png", PNG), mime_type: None }; 9])),
            ("path in chat id", SendRequest { chat_id: "../etc".into(), ..request(vec![]) }),
            ("empty id", SendRequest { client_message_id: String::new(), ..request(vec![]) }),
            ("long id", SendRequest { client_message_id: "x".repeat(129), ..request(vec![]) }),
            ("empty message", SendRequest { text: "  ".into(), ..request(vec![]) }),
        ];
        for (what, req) in cases {
            assert!(matches!(req.validate(), Err(Error::BadSend(_))), "{what}");
        }
        let big = vec![0x89u8; MAX_IMAGE_BYTES + 3];
        let too_big = request(vec![ImageInput { url: data_url("image/png", &big), mime_type: None }]);
        assert!(matches!(too_big.validate(), Err(Error::TooLarge(_))));
        let long_text = SendRequest { text: "x".repeat(MAX_TEXT + 1), ..request(vec![]) };
        assert!(matches!(long_text.validate(), Err(Error::BadSend(_))));
    }
}
