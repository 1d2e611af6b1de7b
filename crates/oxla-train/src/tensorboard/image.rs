//! Images for `Summary.Image`: an HWC array of u8, or of floats in [0, 1],
//! encoded as PNG.

use oxla::{Array, DType};

use super::Error;
use super::proto::Image;

/// `image` (height, width, channels; 1 grayscale, 2 grayscale and alpha, 3
/// RGB, 4 RGBA) as a PNG `Summary.Image`. u8 pixels are kept; float pixels
/// are converted as `tf.image.convert_image_dtype(x, tf.uint8,
/// saturate=True)` (clipped to [0, 1], times 255.5, truncated). Another
/// rank, channel count or dtype, or a NaN pixel, is an error naming the
/// image's type and `what` (the tag and the caller's line).
pub(crate) fn encode_image(image: &Array, what: &str) -> Result<Image, Error> {
    let aval = image.aval()?;
    let bad =
        |expected: &str| Error::InvalidInput(format!("{what}: the image is {aval}; {expected}"));
    let [height, width, channels] = aval.shape[..] else {
        return Err(bad("an image must have rank 3, (height, width, channels)"));
    };
    let color = match channels {
        1 => png::ColorType::Grayscale,
        2 => png::ColorType::GrayscaleAlpha,
        3 => png::ColorType::Rgb,
        4 => png::ColorType::Rgba,
        _ => {
            return Err(bad(
                "an image must have 1, 2, 3 or 4 channels (its last dimension)",
            ));
        }
    };
    let (Ok(h), Ok(w)) = (i32::try_from(height), i32::try_from(width)) else {
        return Err(bad("an image's height and width must be below 2^31"));
    };
    if h <= 0 || w <= 0 {
        return Err(bad("an image must have at least one pixel"));
    }
    let pixels = match aval.dtype {
        DType::U8 => image.to_vec::<u8>()?,
        d if d.is_float() => {
            let values = image.astype(DType::F32).to_vec::<f32>()?;
            if values.iter().any(|v| v.is_nan()) {
                return Err(bad("a float image must not hold NaN"));
            }
            values
                .into_iter()
                .map(|v| (v.clamp(0.0, 1.0) * 255.5).min(255.0) as u8)
                .collect()
        }
        _ => return Err(bad("an image must be u8 or floating-point in [0, 1]")),
    };
    let mut encoded = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut encoded, w as u32, h as u32);
        encoder.set_color(color);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header()?;
        writer.write_image_data(&pixels)?;
        writer.finish()?;
    }
    Ok(Image {
        height: h,
        width: w,
        colorspace: channels as i32,
        encoded_image_string: encoded,
    })
}
