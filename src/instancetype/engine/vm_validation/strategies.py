"""Strategies and names of a VMI spec (KubeVirt vmi-create-admitter.go:
validateHostNameNotConformingToDNSLabelRules, validateSubdomainDNSSubdomainRules,
validateStartStrategy, validateIOThreadsPolicy, validateDNSPolicy, validatePodDNSConfig,
validateLiveMigration)."""
from __future__ import annotations

import ipaddress
from typing import Any

from instancetype.engine.vm_validation._common import (
    _E,
    INVALID,
    NOT_SUPPORTED,
    REQUIRED,
    cause,
    dns1123_label_errors,
    dns1123_subdomain_errors,
)

_IO_THREADS_POLICIES = ("shared", "auto", "supplementalPool")
_EVICTION_STRATEGIES = ("LiveMigrate", "LiveMigrateIfPossible", "None", "External")
_DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None", "")


def validate_names(field: str, spec: dict[str, Any]) -> list[Any]:
    """The hostname (a DNS label) and the subdomain (a DNS subdomain)."""
    causes = []
    hostname = (spec.get("hostname") or "")
    if hostname:
        errs = dns1123_label_errors(hostname)
        if errs:
            causes.append(cause(INVALID, f"{field}.hostname does not conform to the kubernetes DNS_LABEL rules : "
                                f"{', '.join(errs)}", f"{field}.hostname"))
    subdomain = (spec.get("subdomain") or "")
    if subdomain:
        errs = dns1123_subdomain_errors(subdomain)
        if errs:
            causes.append(cause(INVALID, f"{field}.subdomain does not conform to the kubernetes DNS_SUBDOMAIN rules : "
                                f"{', '.join(errs)}", f"{field}.subdomain"))
    return causes


def validate_start_strategy(field: str, spec: dict[str, Any]) -> list[Any]:
    strategy = spec.get("startStrategy")
    if strategy is None:
        return []
    at = f"{field}.startStrategy"
    if strategy != "Paused":
        return [cause(INVALID, f"{at} is set with an unrecognized option: {strategy}", at)]
    if spec.get("livenessProbe") is not None:
        return [cause(INVALID, f"either {at} or {field}.livenessProbe should be provided.Pausing VMI with "
                      f"LivenessProbe is not supported", at)]
    return []


def validate_io_threads_policy(field: str, spec: dict[str, Any]) -> list[Any]:
    domain = (spec.get("domain") or _E)
    policy = domain.get("ioThreadsPolicy")
    if policy is None:
        return []
    causes = []
    if policy not in _IO_THREADS_POLICIES:
        causes.append(cause(INVALID, f"Invalid IOThreadsPolicy ({policy})", f"{field}.domain.ioThreadsPolicy"))
    count = (domain.get("ioThreads") or _E).get("supplementalPoolThreadCount")
    if policy == "supplementalPool" and (count is None or count < 1):
        causes.append(cause(INVALID, "the number of iothreads needs to be set and positive for the dedicated policy",
                            f"{field}.domain.ioThreads.count"))
    return causes


def validate_dns(field: str, spec: dict[str, Any]) -> list[Any]:
    """validateDNSPolicy (when set) and validatePodDNSConfig."""
    causes = []
    policy = (spec.get("dnsPolicy") or "")
    at = f"{field}.dnsPolicy"
    if policy and policy not in _DNS_POLICIES:
        causes.append(cause(NOT_SUPPORTED, f"DNSPolicy: {policy} is not supported, valid values: "
                            f"[{' '.join(_DNS_POLICIES)}]", at))
    config = spec.get("dnsConfig")
    config_at = f"{field}.dnsConfig"
    if policy == "None":
        if config is None:
            return causes + [cause(REQUIRED, "must provide `dnsConfig` when `dnsPolicy` is None", config_at)]
        if not (config or _E).get("nameservers"):
            return causes + [cause(REQUIRED, "must provide at least one DNS nameserver when `dnsPolicy` is None",
                                   "nameservers")]
    if config is None:
        return causes
    config = (config or _E)
    servers = [x for x in config.get("nameservers") or () if type(x) is str]
    if len(servers) > 3:
        causes.append(cause(INVALID, f"must not have more than 3 nameservers: [{' '.join(servers)}]", "nameservers"))
    for ns in servers:
        try:
            ipaddress.ip_address(ns)
        except ValueError:
            causes.append(cause(INVALID, f"must be valid IP address: {ns}", "nameservers"))
    searches = [x for x in config.get("searches") or () if type(x) is str]
    if len(searches) > 32:
        causes.append(cause(INVALID, "must not have more than 32 search paths", "searchDomains"))
    if len(" ".join(searches)) > 2048:
        causes.append(cause(INVALID, "must not have more than 2048 characters (including spaces) in the search list",
                            "searchDomains"))
    for search in searches:
        for msg in dns1123_subdomain_errors(search):
            causes.append(cause(INVALID, msg, "searchDomains"))
    for option in (config.get("options") or ()):
        if not (option.get("name") or ""):
            causes.append(cause(INVALID, "Option.Name must not be empty", "options"))
    return causes


def validate_eviction_strategy(field: str, spec: dict[str, Any], config_strategy: str | None) -> list[Any]:
    """validateLiveMigration: the VMI's eviction strategy, else the cluster's, must be known."""
    strategy = spec.get("evictionStrategy")
    effective = strategy if strategy is not None else config_strategy
    if effective is None or effective in _EVICTION_STRATEGIES:
        return []
    at = f"{field}.evictionStrategy"
    return [cause(INVALID, f"{at} is set with an unrecognized option: {(strategy or '')}", at)]
