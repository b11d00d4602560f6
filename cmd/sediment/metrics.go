package main

import (
	"github.com/sediment/sediment/httpapi"
)

// metricsAccessFlag is --metrics-public: who may read GET /metrics without
// the private key.
type metricsAccessFlag httpapi.MetricsAccess

const metricsPublicUsage = "who may read GET /metrics (Prometheus) without the private key, one of `none|loopback|all`: none (the default) lets only the private key in, as for the management API; loopback adds clients on 127.0.0.1 or ::1 (not behind a reverse proxy on this host); all lets anyone in"

// String implements flag.Value.
func (f *metricsAccessFlag) String() string { return httpapi.MetricsAccess(*f).String() }

// Set implements flag.Value.
func (f *metricsAccessFlag) Set(s string) error {
	a, err := httpapi.ParseMetricsAccess(s)
	if err != nil {
		return err
	}
	*f = metricsAccessFlag(a)
	return nil
}
