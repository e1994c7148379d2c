// A single-member etcd for the tests: the embed package's server with the
// few flags the tests set, stopped cleanly on SIGTERM/SIGINT.
package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

func mustURL(flagName, raw string) url.URL {
	u, err := url.Parse(raw)
	if err != nil {
		fmt.Fprintf(os.Stderr, "etcd: --%s: %v\n", flagName, err)
		os.Exit(2)
	}
	return *u
}

func main() {
	dataDir := flag.String("data-dir", "default.etcd", "directory for the data")
	client := flag.String("listen-client-urls", "http://127.0.0.1:2379", "client URL")
	peer := flag.String("listen-peer-urls", "http://127.0.0.1:2380", "peer URL")
	quota := flag.Int64("quota-backend-bytes", 2<<30, "backend quota in bytes")
	version := flag.Bool("version", false, "print the version and exit")
	flag.Parse()
	if *version {
		fmt.Println("etcd (embed) v3.6")
		return
	}

	cfg := embed.NewConfig()
	cfg.Name = "test"
	cfg.Dir = *dataDir
	cu, pu := mustURL("listen-client-urls", *client), mustURL("listen-peer-urls", *peer)
	cfg.ListenClientUrls = []url.URL{cu}
	cfg.AdvertiseClientUrls = []url.URL{cu}
	cfg.ListenPeerUrls = []url.URL{pu}
	cfg.AdvertisePeerUrls = []url.URL{pu}
	cfg.InitialCluster = cfg.Name + "=" + pu.String()
	cfg.QuotaBackendBytes = *quota
	cfg.LogLevel = "warn"
	// The tests' data is thrown away: no fsync per write.
	cfg.UnsafeNoFsync = true

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "etcd: %v\n", err)
		os.Exit(1)
	}
	select {
	case <-e.Server.ReadyNotify():
		fmt.Fprintln(os.Stderr, "etcd: ready")
	case <-time.After(60 * time.Second):
		e.Server.Stop()
		fmt.Fprintln(os.Stderr, "etcd: not ready after 60s")
		os.Exit(1)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	select {
	case <-stop:
	case err := <-e.Err():
		fmt.Fprintf(os.Stderr, "etcd: %v\n", err)
		e.Close()
		os.Exit(1)
	}
	e.Close()
}
