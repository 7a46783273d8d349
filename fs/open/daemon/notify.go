package daemon

import (
	"fmt"
	"net"
	"os"
	"strings"
)

// envNotifySocket names systemd's readiness socket (Type=notify services).
const envNotifySocket = "NOTIFY_SOCKET"

// NotifyReady tells systemd that the service is ready ("READY=1", with
// this process as its main pid and status as its status line), when the
// service manager asked for it with $NOTIFY_SOCKET; recfs mount can then
// run as a Type=notify service, and units ordered after it start once the
// mount answers. It reports whether a notification was sent.
func NotifyReady(status string) (bool, error) {
	return Notify(fmt.Sprintf("READY=1\nMAINPID=%d\nSTATUS=%s\n", os.Getpid(), strings.ReplaceAll(status, "\n", " ")))
}

// NotifyStopping tells systemd that the service is shutting down
// ("STOPPING=1", with status as its status line), when it asked for
// notifications. It reports whether a notification was sent.
func NotifyStopping(status string) (bool, error) {
	return Notify(fmt.Sprintf("STOPPING=1\nSTATUS=%s\n", strings.ReplaceAll(status, "\n", " ")))
}

// Notify sends msg, newline-separated VAR=VALUE assignments, as one
// datagram to $NOTIFY_SOCKET (a path, or @name for an abstract socket),
// as sd_notify(3) does. It reports whether there was a socket to send to.
func Notify(msg string) (bool, error) {
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
	if _, err := c.Write([]byte(msg)); err != nil {
		return false, fmt.Errorf("notify systemd: %w", err)
	}
	return true, nil
}
