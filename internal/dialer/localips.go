package dialer

import (
	"errors"
	"fmt"
	"math/big"
	"net"
	"strings"
)

// IPPool is the localIPs option: the local addresses VUs dial from, VU n
// taking the address at (n-1) modulo the pool's size (setup and teardown,
// VU 0, the first), as in k6.
type IPPool struct {
	blocks []ipBlock
	size   *big.Int
}

// ipBlock is a run of consecutive addresses.
type ipBlock struct {
	first *big.Int
	count *big.Int
	v6    bool
}

// ParseIPPool reads the localIPs option: comma-separated addresses
// ("10.0.0.1"), ranges ("10.0.0.1-10.0.0.20") and CIDR blocks
// ("10.0.0.0/30", whose network and broadcast addresses are left out when
// it has more than two), with k6's errors. Items are taken as written:
// a space around a comma makes the item invalid, as in k6.
func ParseIPPool(s string) (*IPPool, error) {
	p := &IPPool{size: new(big.Int)}
	for _, item := range strings.Split(s, ",") {
		b, err := parseBlock(item)
		if err != nil {
			return nil, err
		}
		p.blocks = append(p.blocks, b)
		p.size.Add(p.size, b.count)
	}
	return p, nil
}

func parseBlock(s string) (ipBlock, error) {
	switch {
	case strings.Contains(s, "-"):
		lo, hi, _ := strings.Cut(s, "-")
		a, b := net.ParseIP(lo), net.ParseIP(hi)
		if a == nil || b == nil {
			return ipBlock{}, errors.New("wrong IP range format: " + s)
		}
		if (a.To4() == nil) != (b.To4() == nil) {
			return ipBlock{}, errors.New("mixed IP range format: " + s)
		}
		blk := span(a, b)
		if blk.count.Sign() <= 0 {
			return ipBlock{}, errors.New("negative IP range: " + s)
		}
		return blk, nil
	case strings.Contains(s, "/"):
		_, n, err := net.ParseCIDR(s)
		if err != nil {
			return ipBlock{}, fmt.Errorf("%s is not a valid CIDR block: %w", s, err)
		}
		last := make(net.IP, len(n.IP))
		for i := range n.IP {
			last[i] = n.IP[i] | ^n.Mask[i]
		}
		blk := span(n.IP, last)
		// An IPv4 block of more than two addresses keeps its network
		// and broadcast addresses out, as k6 does.
		if !blk.v6 && blk.count.Cmp(big.NewInt(2)) > 0 {
			blk.first.Add(blk.first, big.NewInt(1))
			blk.count.Sub(blk.count, big.NewInt(2))
		}
		return blk, nil
	default:
		ip := net.ParseIP(s)
		if ip == nil {
			return ipBlock{}, fmt.Errorf("%s is not a valid IP, IP range or CIDR", s)
		}
		return span(ip, ip), nil
	}
}

// span is the block from a to b, both included (count ≤ 0 when b < a).
func span(a, b net.IP) ipBlock {
	blk := ipBlock{v6: a.To4() == nil}
	if blk.v6 {
		blk.first, blk.count = new(big.Int).SetBytes(a.To16()), new(big.Int).SetBytes(b.To16())
	} else {
		blk.first, blk.count = new(big.Int).SetBytes(a.To4()), new(big.Int).SetBytes(b.To4())
	}
	blk.count.Sub(blk.count, blk.first)
	blk.count.Add(blk.count, big.NewInt(1))
	return blk
}

// For returns the local address of VU vu: the address at (vu-1) modulo
// the pool's size, the first for vu 0 (setup and teardown).
func (p *IPPool) For(vu uint64) net.IP {
	i := uint64(0)
	if vu > 0 {
		i = vu - 1
	}
	idx := new(big.Int).Rem(new(big.Int).SetUint64(i), p.size)
	for _, b := range p.blocks {
		if idx.Cmp(b.count) < 0 {
			n := idx.Add(idx, b.first)
			if b.v6 {
				return net.IP(n.FillBytes(make([]byte, net.IPv6len)))
			}
			return net.IP(n.FillBytes(make([]byte, net.IPv4len)))
		}
		idx.Sub(idx, b.count)
	}
	return nil // unreachable: idx < size, the sum of the counts
}
