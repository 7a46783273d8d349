package main

import (
	"fmt"
	"strconv"
	"strings"
)

// parseSize reads a byte count: a number with an optional K, M or G suffix
// (powers of 1024; an optional trailing "iB" or "B" is accepted).
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(strings.ToUpper(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "IB"), "B")
	mult := int64(1)
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		}
		if mult > 1 {
			t = t[:n-1]
		}
	}
	v, err := strconv.ParseInt(t, 10, 64)
	if err != nil || v < 0 || v > (1<<62)/mult {
		return 0, fmt.Errorf("invalid size %q (want e.g. 256M, 1G, 65536)", s)
	}
	return v * mult, nil
}
