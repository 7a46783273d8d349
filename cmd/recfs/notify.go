package main

import (
	"fmt"
	"net"
	"os"
	"strings"
)

// envNotifySocket names systemd's readiness socket (Type=notify services).
const envNotifySocket = "NOTIFY_SOCKET"

// notifyReady tells systemd that the mount is ready ("READY=1"), when the
// service manager asked for it with $NOTIFY_SOCKET; recfs mount can then
// run as a Type=notify service, and units ordered after it start once the
// mount answers. It reports whether a notification was sent.
func notifyReady(status string) (bool, error) {
	addr := os.Getenv(envNotifySocket)
	if addr == "" {
		return false, nil
	}
	if strings.HasPrefix(addr, "@") {
		addr = "\x00" + addr[1:] // an abstract socket
	}
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: addr, Net: "unixgram"})
	if err != nil {
		return false, fmt.Errorf("notify systemd: %w", err)
	}
	defer c.Close()
	msg := fmt.Sprintf("READY=1\nMAINPID=%d\nSTATUS=%s\n", os.Getpid(), strings.ReplaceAll(status, "\n", " "))
	if _, err := c.Write([]byte(msg)); err != nil {
		return false, fmt.Errorf("notify systemd: %w", err)
	}
	return true, nil
}
