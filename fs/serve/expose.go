package serve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
)

// DefaultAddr is where servers listen unless told otherwise: the loopback
// interface, on a port the system picks.
const DefaultAddr = "127.0.0.1:0"

// ErrExposed is returned by [CheckExposure] for a listener others can
// reach when nothing guards it.
var ErrExposed = errors.New("serve: refusing to serve beyond this machine without credentials")

// CheckExposure returns an error matching [ErrExposed] when addr
// (host:port) is reachable from other machines and guarded is false:
// guarded means that every request must bring credentials, or that the
// user said so with --insecure-allow-anyone. An empty host, 0.0.0.0 and
// [::] listen everywhere; a host name counts as loopback only when every
// address it resolves to is.
func CheckExposure(ctx context.Context, addr string, guarded bool) error {
	if guarded {
		return nil
	}
	loop, err := IsLoopback(ctx, addr)
	if err != nil {
		return err
	}
	if !loop {
		return fmt.Errorf("%w: %s is reachable from other machines; give credentials (--user/--pass or --htpasswd) or --insecure-allow-anyone", ErrExposed, addr)
	}
	return nil
}

// IsLoopback reports whether the listen address addr (host:port) is only
// on the loopback interface.
func IsLoopback(ctx context.Context, addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, fmt.Errorf("serve: address %q: %w", addr, err)
	}
	if host == "" {
		return false, nil // every interface
	}
	if strings.EqualFold(host, "localhost") {
		return true, nil
	}
	if ip := net.ParseIP(strings.Trim(host, "[]")); ip != nil {
		return ip.IsLoopback(), nil
	}
	ips, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return false, fmt.Errorf("serve: address %q: %w", addr, err)
	}
	for _, ip := range ips {
		if !ip.IP.IsLoopback() {
			return false, nil
		}
	}
	return len(ips) > 0, nil
}
