//! Numbers for people: durations and byte counts.

/// Bytes in a GiB.
pub const GIB: f64 = (1u64 << 30) as f64;

/// A duration in seconds, minutes, hours or days (`plan`).
pub fn duration(secs: f64) -> String {
    match secs {
        s if s < 100.0 => format!("{s:.0} s"),
        s if s < 6000.0 => format!("{:.0} min", s / 60.0),
        s if s < 72.0 * 3600.0 => format!("{:.1} h", s / 3600.0),
        s => format!("{:.1} days", s / 86400.0),
    }
}

/// A short clock-like duration: `42s`, `12m05s`, `3h07m` (`status`).
pub fn clock(secs: f64) -> String {
    let s = secs.max(0.0) as u64;
    match s {
        0..=99 => format!("{s}s"),
        100..=5999 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// A byte count in KiB, MiB, GiB or TiB.
pub fn bytes(b: u64) -> String {
    let b = b as f64;
    match b {
        b if b < 1024.0 * 1024.0 => format!("{:.1} KiB", b / 1024.0),
        b if b < GIB => format!("{:.1} MiB", b / (1024.0 * 1024.0)),
        b if b < 1024.0 * GIB => format!("{:.1} GiB", b / GIB),
        b => format!("{:.2} TiB", b / (1024.0 * GIB)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(duration(42.0), "42 s");
        assert_eq!(duration(600.0), "10 min");
        assert_eq!(duration(7200.0), "2.0 h");
        assert_eq!(duration(3.0 * 86400.0), "3.0 days");
        assert_eq!(clock(42.0), "42s");
        assert_eq!(clock(725.0), "12m05s");
        assert_eq!(clock(11220.0), "3h07m");
        assert_eq!(bytes(2048), "2.0 KiB");
        assert_eq!(bytes(3 << 30), "3.0 GiB");
    }
}
