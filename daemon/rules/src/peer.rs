//! Where a connection comes from, as the per-address limits count it: an
//! IPv4 address, or an IPv6 address's /64 prefix (one host or one customer
//! network holds a whole /64, so counting its addresses apart would give it
//! 2^64 allowances). Eight bytes, so that every connection can keep it.

use std::net::IpAddr;

/// A peer address as the limits count it (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PeerKey(u64);

impl PeerKey {
    /// The key of `address`. An IPv4-mapped IPv6 address counts as its IPv4
    /// address, so a dual-stack listener counts one client once.
    pub fn of(address: IpAddr) -> PeerKey {
        match address {
            IpAddr::V4(v4) => PeerKey(u64::from(u32::from(v4))),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => PeerKey(u64::from(u32::from(v4))),
                // The top bit marks IPv6: no IPv4 key (32 bits) has it set.
                None => PeerKey((u128::from(v6) >> 64) as u64 | 1 << 63),
            },
        }
    }
}

/// The address as the limits count it: `192.0.2.7`, or an IPv6 /64 as
/// `2001:db8:1:2::/64` (the rest of an IPv6 address is not kept). For logs.
impl std::fmt::Display for PeerKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let key = self.0;
        if key & 1 << 63 == 0 {
            let v4 = std::net::Ipv4Addr::from(key as u32);
            return write!(f, "{v4}");
        }
        let prefix = u128::from(key & !(1 << 63)) << 64;
        let v6 = std::net::Ipv6Addr::from(prefix);
        write!(f, "{v6}/64")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    #[test]
    fn ipv4_counts_per_address_and_ipv6_per_64_prefix() {
        let v4 = |d| PeerKey::of(IpAddr::V4(Ipv4Addr::new(127, 0, 0, d)));
        assert_ne!(v4(1), v4(2));
        assert_eq!(v4(1), v4(1));
        let v6 = |s: &str| PeerKey::of(IpAddr::V6(s.parse::<Ipv6Addr>().unwrap()));
        assert_eq!(v6("2001:db8:1:2::1"), v6("2001:db8:1:2:ffff::9"));
        assert_ne!(v6("2001:db8:1:2::1"), v6("2001:db8:1:3::1"));
        assert_eq!(v6("::ffff:127.0.0.1"), v4(1), "mapped IPv4 is IPv4");
        assert_ne!(v6("::1"), v4(1));
        assert_ne!(v6("::"), PeerKey::of(IpAddr::V4(Ipv4Addr::UNSPECIFIED)));
    }

    #[test]
    fn a_key_reads_as_the_address_or_the_prefix_it_counts() {
        let v4 = PeerKey::of(IpAddr::V4(Ipv4Addr::new(192, 0, 2, 7)));
        assert_eq!(v4.to_string(), "192.0.2.7");
        let v6 = PeerKey::of("2001:db8:1:2::9".parse::<IpAddr>().unwrap());
        assert_eq!(v6.to_string(), "2001:db8:1:2::/64");
        let mapped = PeerKey::of("::ffff:10.0.0.1".parse::<IpAddr>().unwrap());
        assert_eq!(mapped.to_string(), "10.0.0.1");
    }
}
