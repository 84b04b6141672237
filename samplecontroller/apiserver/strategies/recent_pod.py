"""The pod-spec fields Kubernetes 1.33-1.37 added, checked as kube-apiserver 1.37 checks them:
their validation (pkg/apis/core/validation), the validation options an update's stored spec
relaxes (pkg/api/pod GetValidationOptionsFromPodSpecAndMeta) and the dropping of the fields whose
feature gate is off (pkg/api/pod dropDisabledFields), for a Pod and every pod template.

- ``validate_pod_spec(spec, field)``: the rules that hold whatever the gates: ``hostnameOverride``
  (validatePodHostName), env ``valueFrom.fileKeyRef`` (validateFileKeySelector,
  validateFileKeyRefVolumes), ``lifecycle.stopSignal`` (validateStopSignal, on the containers
  whose lifecycle kube validates), an ephemeral container's ``restartPolicy``,
  ``restartPolicyRules`` and ``lifecycle``, a projected ``podCertificate`` (validateProjectionSources).
- ``pod_option_errors(spec, field, opts)``: the rules that depend on the ``PodOptions``
  (``pod_options``): containers' ``restartPolicy``/``restartPolicyRules``
  (validateInitContainerRestartPolicy, validateContainerRestartPolicy) and an env var's sources
  (validateEnvVarValueFrom).
- ``drop_pod_fields(spec, old, enabled)``: dropDisabledFields for the 1.33-1.37 fields and
  those of the gates whose default changed between 1.33 and 1.37 (pod ``resources``,
  ``resourceClaims`` and containers' ``resources.claims``, ``image`` volumes and their mounts, a
  projected ``clusterTrustBundle``); ``drop_pod_status_fields(status, old_status, old_spec,
  enabled)``: dropDisabledPodStatusFields for the status fields of such gates.

Where kube's rule could not be read (its 1.36/1.37 ``pkg/api/pod/util.go``), the drop of the
fields of the 1.37 alpha gates keeps the per-gate rule of ``_gated_leaves`` (see
``drop_pod_fields``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from samplecontroller.apiserver.objects import as_list as _list
from samplecontroller.apiserver.objects import as_mapping as _dict
from samplecontroller.apiserver.schema import (
    ERROR_NOT_FOUND,
    FieldError,
    forbidden,
    invalid,
    not_supported,
    required,
    too_long,
    too_many,
)
from samplecontroller.apiserver.validation import (
    dns1123_label_errors,
    dns1123_subdomain_errors,
    each_object,
    get_path,
    qualified_name_errors,
)

__all__ = ["PodOptions", "drop_pod_fields", "drop_pod_status_fields", "pod_option_errors", "pod_options",
           "signer_name_errors", "validate_pod_spec"]

Obj = dict[str, Any]
Enabled = Callable[[str], bool]
"""Whether a feature gate is on (at the emulated version)."""


_CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")


def _containers(spec: Any, *lists: str) -> Iterator[tuple[str, Any]]:
    """(list name, container) of the containers of a pod spec (all lists, in kube's visiting
    order: init, regular, ephemeral, unless ``lists`` names some)."""
    for key in lists or _CONTAINER_LISTS:
        for c in _list(_dict(spec).get(key)):
            if isinstance(c, dict):
                yield key, c


def _shapes() -> list[FieldError]:
    """A sink for each_object's "must be an object" errors the schema reports already."""
    return []


# ------------------------------------------------------------------------------------ options


@dataclass(frozen=True)
class PodOptions:
    """The PodValidationOptions of the 1.33-1.37 fields: a gate on, or the stored spec of an
    update already using what it allows."""

    restart_rules: bool = True
    """AllowContainerRestartPolicyRules: ContainerRestartRules, or containerRestartRulesInUse."""
    restart_all: bool = True
    """AllowRestartAllContainers: RestartAllContainersOnContainerExits, or
    restartAllContainersActionInUse (the RestartAllContainers action; rules on a sidecar)."""
    env_files: bool = True
    """AllowEnvFilesValidation: EnvFiles, or an env var of the stored spec with a fileKeyRef."""
    userns_host_network: bool = False
    """AllowUserNamespacesHostNetworkSupport: UserNamespacesHostNetworkSupport (alpha, off since
    1.35, absent before: off at every version served), or a stored spec with ``hostUsers: false``
    and ``hostNetwork: true``."""
    userns_volume_devices: bool = False
    """AllowUserNamespacesWithVolumeDevices: a stored spec with ``hostUsers: false`` and a
    container's volumeDevices."""


def _restart_rules_in_use(spec: Any) -> bool:
    """containerRestartRulesInUse: an init container's restartPolicy other than Always or its
    rules, or a regular container's restartPolicy."""
    for c in _list(_dict(spec).get("initContainers")):
        c = _dict(c)
        if (c.get("restartPolicy") is not None and c.get("restartPolicy") != "Always") or _list(
                c.get("restartPolicyRules")):
            return True
    return any(_dict(c).get("restartPolicy") is not None for c in _list(_dict(spec).get("containers")))


def _restart_all_in_use(spec: Any) -> bool:
    """restartAllContainersActionInUse: a rule with the RestartAllContainers action on a regular
    or init container, or any rule on a sidecar (an init container with restartPolicy Always)."""
    for key, c in _containers(spec, "containers", "initContainers"):
        rules = _list(c.get("restartPolicyRules"))
        if any(_dict(rule).get("action") == "RestartAllContainers" for rule in rules):
            return True
        if key == "initContainers" and c.get("restartPolicy") == "Always" and rules:
            return True
    return False


def _file_key_refs_in_use(spec: Any) -> bool:
    return any(get_path(var, "valueFrom", "fileKeyRef") is not None
               for _, c in _containers(spec) for var in _list(c.get("env")))


def _no_host_users(spec: Any) -> bool:
    return _dict(spec).get("hostUsers") is False


def pod_options(old_spec: Any, enabled: Enabled) -> PodOptions:
    """GetValidationOptionsFromPodSpecAndMeta's options for the 1.33-1.37 fields (``old_spec``:
    the stored spec of an update, None on create)."""
    old = old_spec if isinstance(old_spec, Mapping) else None
    return PodOptions(
        restart_rules=enabled("ContainerRestartRules") or (old is not None and _restart_rules_in_use(old)),
        restart_all=enabled("RestartAllContainersOnContainerExits") or (old is not None and _restart_all_in_use(old)),
        env_files=enabled("EnvFiles") or (old is not None and _file_key_refs_in_use(old)),
        userns_host_network=old is not None and _no_host_users(old) and old.get("hostNetwork") is True,
        userns_volume_devices=old is not None and _no_host_users(old) and any(
            _list(c.get("volumeDevices")) for _, c in _containers(old)),
    )


# ------------------------------------------------------------------------------------ validation

_CONTAINER_RESTART_POLICIES = ("Always", "Never", "OnFailure")
_EXIT_CODE_OPERATORS = ("In", "NotIn")
_MAX_RESTART_RULES = 20
_MAX_EXIT_CODES = 255
_MAX_HOSTNAME_OVERRIDE = 64
_KEY_TYPES = ("RSA3072", "RSA4096", "ECDSAP256", "ECDSAP384", "ECDSAP521", "ED25519")
_MIN_CERT_SECONDS = 3600
_MAX_CERT_SECONDS = 91 * 24 * 60 * 60  # certificates.MaxMaxExpirationSeconds
_MAX_KUBERNETES_CERT_SECONDS = 24 * 60 * 60  # certificates.KubernetesMaxMaxExpirationSeconds
_TOTAL_ANNOTATION_SIZE = 256 * 1024
# supportedStopSignalsLinux, sorted as sets.List sorts it.
_LINUX_SIGNALS = tuple(sorted(
    ["SIGABRT", "SIGALRM", "SIGBUS", "SIGCHLD", "SIGCLD", "SIGCONT", "SIGFPE", "SIGHUP", "SIGILL", "SIGINT",
     "SIGIO", "SIGIOT", "SIGKILL", "SIGPIPE", "SIGPOLL", "SIGPROF", "SIGPWR", "SIGQUIT", "SIGSEGV", "SIGSTKFLT",
     "SIGSTOP", "SIGSYS", "SIGTERM", "SIGTRAP", "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGURG", "SIGUSR1", "SIGUSR2",
     "SIGVTALRM", "SIGWINCH", "SIGXCPU", "SIGXFSZ", "SIGRTMIN", "SIGRTMAX"]
    + [f"SIGRTMIN+{i}" for i in range(1, 16)] + [f"SIGRTMAX-{i}" for i in range(1, 15)]))
_WINDOWS_SIGNALS = ("SIGKILL", "SIGTERM")
_VALUE_SOURCES = ("fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef", "fileKeyRef")
_NO_SOURCE = "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`"
_NO_SOURCE_FILES = ("must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef`, `secretKeyRef` "
                    "or `fileKeyRef`")
_RELAXED_ENV_NAME = "a valid environment variable name must consist only of printable ASCII characters other than '='"
_NOT_FOR_INIT = "may not be set for init containers without restartPolicy=Always"
_NOT_FOR_EPHEMERAL = "cannot be set for an Ephemeral Container"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


def _no_backsteps(value: str, field: str) -> list[FieldError]:
    """validatePathNoBacksteps: no '..' element between slashes (filepath.ToSlash changes nothing
    on the Linux kube-apiserver)."""
    return [invalid(field, value, "must not contain '..'")] if ".." in value.split("/") else []


def _local_non_reserved_path(value: str, field: str) -> list[FieldError]:
    """ValidateLocalNonReservedPath: relative, no '..' element, not starting with '..'."""
    errors = [invalid(field, value, "must be a relative path")] if value.startswith("/") else []
    errors += _no_backsteps(value, field)
    if value.startswith("..") and not value.startswith("../"):
        errors.append(invalid(field, value, "must not start with '..'"))
    return errors


def _hostname_override(spec: Mapping[str, Any], field: str) -> list[FieldError]:
    """validatePodHostName."""
    value = spec.get("hostnameOverride")
    if value is None:
        return []
    path, text = f"{field}.hostnameOverride", _text(value)
    errors: list[FieldError] = []
    if spec.get("setHostnameAsFQDN") is True:
        errors.append(forbidden(path, "may not be specified when setHostnameAsFQDN is true"))
    if spec.get("hostNetwork") is True:
        errors.append(forbidden(path, "may not be specified when hostNetwork is true"))
    if len(text.encode()) > _MAX_HOSTNAME_OVERRIDE:  # Go's len: bytes
        errors.append(too_long(path, _MAX_HOSTNAME_OVERRIDE))
    return errors + [invalid(path, text, m) for m in dns1123_subdomain_errors(text)]


def signer_name_errors(name: str, field: str) -> list[FieldError]:
    """ValidateSignerName (pkg/apis/core/validation/names.go)."""
    if not name:
        return [required(field)]
    segments = name.split("/")
    if len(segments) != 2:
        return [invalid(field, name, "must be a fully qualified domain and path of the form "
                                     "'example.com/signer-name'")]
    errors: list[FieldError] = []
    domain, path = segments
    if len(domain.encode()) > 253:
        errors.append(too_long(field, 253))
    labels = domain.split(".")
    for label in labels:
        messages = dns1123_label_errors(label)
        if messages:
            errors += [invalid(field, domain, f"validating label {_go_quote(label)}: {m}") for m in messages]
            break
    if len(labels) < 2:
        errors.append(invalid(field, domain, "should be a domain with at least two segments separated by dots"))
    for label in path.split("."):
        messages = dns1123_subdomain_errors(label)
        if messages:
            errors += [invalid(field, path, f"validating label {_go_quote(label)}: {m}") for m in messages]
            break
    if len(name.encode()) > 253 + (253 + 63 + 1) + 1:
        errors.append(too_long(field, 253 + (253 + 63 + 1) + 1))
    return errors


def _go_quote(text: str) -> str:
    """Go's %q of ``text``."""
    return json.dumps(text, ensure_ascii=False)


def _user_annotations(annotations: Any, field: str) -> list[FieldError]:
    """ValidateUserAnnotations: domain-prefixed keys (IsDomainPrefixedKey, lower-cased), 256 KiB."""
    if not isinstance(annotations, Mapping):
        return []
    errors: list[FieldError] = []
    size = 0
    for key, value in annotations.items():
        lowered = _text(key).lower()
        size += len(_text(key).encode()) + len(_text(value).encode())  # Go's len: bytes
        if not lowered:
            errors.append(required(field))
            continue
        messages = qualified_name_errors(lowered)
        if messages:
            errors += [invalid(field, lowered, m) for m in messages]
        elif len(lowered.split("/")) != 2:
            errors.append(invalid(field, lowered, 'must be a domain-prefixed key (such as "acme.io/foo")'))
    if size > _TOTAL_ANNOTATION_SIZE:
        errors.append(too_long(field, _TOTAL_ANNOTATION_SIZE))
    return errors


def _pod_certificate(cert: Mapping[str, Any], path: str, written: Callable[[str], list[FieldError]]) -> list[FieldError]:
    """A podCertificate projection's errors; ``written`` records each path it writes in the
    projection, answering the error of a duplicate."""
    signer = _text(cert.get("signerName"))
    errors = signer_name_errors(signer, f"{path}.signerName")
    if cert.get("userAnnotations") is not None:
        errors += _user_annotations(cert.get("userAnnotations"), f"{path}.userAnnotations")
    key_type = _text(cert.get("keyType"))
    if key_type not in _KEY_TYPES:
        errors.append(not_supported(f"{path}.keyType", key_type, _KEY_TYPES))
    seconds = cert.get("maxExpirationSeconds")
    if isinstance(seconds, int) and not isinstance(seconds, bool):
        if seconds < _MIN_CERT_SECONDS:
            errors.append(invalid(f"{path}.maxExpirationSeconds", seconds,
                                  f"if provided, maxExpirationSeconds must be >= {_MIN_CERT_SECONDS}"))
        host = signer.partition("/")[0]
        bound = _MAX_KUBERNETES_CERT_SECONDS if host == "kubernetes.io" or host.endswith(".kubernetes.io") \
            else _MAX_CERT_SECONDS
        if seconds > bound:
            errors.append(invalid(f"{path}.maxExpirationSeconds", seconds,
                                  f"if provided, maxExpirationSeconds must be <= {bound}"))
    paths = 0
    for key in ("credentialBundlePath", "keyPath", "certificateChainPath"):
        value = _text(cert.get(key))
        if value:
            paths += 1
            errors += _local_non_reserved_path(value, f"{path}.{key}") + written(value)
    if not paths:
        errors.append(required(path, "specify at least one of credentialBundlePath, keyPath, and "
                                     "certificateChainPath"))
    return errors


_PROJECTIONS = ("secret", "configMap", "downwardAPI", "serviceAccountToken", "clusterTrustBundle", "podCertificate")


def _projection(projected: Mapping[str, Any], field: str) -> list[FieldError]:
    """validateProjectionSources' podCertificate rules, the "conflicting duplicate paths" of the
    paths the projection writes (items of secret, configMap and downwardAPI sources,
    clusterTrustBundle and podCertificate paths, in order) and one volume type per source."""
    errors: list[FieldError] = []
    seen: set[str] = set()

    def written(path: str, blame: Any = None) -> list[FieldError]:
        if path in seen:
            return [invalid(field, path if blame is None else blame, "conflicting duplicate paths")]
        seen.add(path)
        return []

    for spath, source in each_object(_list(projected.get("sources")), f"{field}.sources", _shapes()):
        for kind in ("secret", "configMap"):
            ref = source.get(kind)
            if isinstance(ref, Mapping):
                for item in _list(ref.get("items")):
                    if _text(_dict(item).get("path")):
                        errors += written(_text(_dict(item).get("path")), _text(ref.get("name")))
        if isinstance(source.get("downwardAPI"), Mapping):
            for item in _list(source["downwardAPI"].get("items")):
                if _text(_dict(item).get("path")):
                    errors += written(_text(_dict(item).get("path")))
        if isinstance(source.get("clusterTrustBundle"), Mapping):
            errors += written(_text(source["clusterTrustBundle"].get("path")))
        cert = source.get("podCertificate")
        if isinstance(cert, Mapping):
            errors += _pod_certificate(cert, f"{spath}.podCertificate", written)
        if sum(1 for kind in _PROJECTIONS if source.get(kind) is not None) > 1:
            errors.append(forbidden(spath, "may not specify more than 1 volume type per source"))
    return errors


def _stop_signal(signal: Any, field: str, os: Any) -> list[FieldError]:
    """validateStopSignal: only with ``spec.os``; Linux or Windows signals by its name."""
    if os is None:
        return [forbidden(field, "may not be set for containers with empty `spec.os.name`")]
    name = _dict(os).get("name")
    if name == "windows" and signal not in _WINDOWS_SIGNALS:
        return [not_supported(field, signal, _WINDOWS_SIGNALS)]
    if name == "linux" and signal not in _LINUX_SIGNALS:
        return [not_supported(field, signal, _LINUX_SIGNALS)]
    return []


_PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
# validateFieldAllowList's fields of an EphemeralContainerCommon that are not allowed, in its
# struct order, among those this module checks (the 1.34 restart fields, the lifecycle holding
# the 1.33 stopSignal, the probes beside it).
_NOT_EPHEMERAL = ("restartPolicy", "restartPolicyRules", *_PROBES, "lifecycle")


def _lifecycle(key: str, c: Mapping[str, Any], path: str, os: Any) -> list[FieldError]:
    """Where kube validates a container's lifecycle (validateLifecycle: regular containers and
    sidecars) and where it refuses one with the probes (an init container without restartPolicy
    Always; an ephemeral container: ``validate_pod_spec``); of the lifecycle, the 1.33
    ``stopSignal``."""
    if key == "ephemeralContainers":
        return []
    if key == "initContainers" and c.get("restartPolicy") != "Always":
        return [forbidden(f"{path}.{name}", _NOT_FOR_INIT) for name in ("lifecycle", *_PROBES)
                if c.get(name) is not None]
    signal = _dict(c.get("lifecycle")).get("stopSignal")
    return [] if signal is None else _stop_signal(signal, f"{path}.lifecycle.stopSignal", os)


def _file_key_selector(ref: Mapping[str, Any], path: str) -> list[FieldError]:
    """validateFileKeySelector: key (IsRelaxedEnvVarName), volumeName (a DNS-1123 label), path
    (no '..' element)."""
    errors: list[FieldError] = []
    key = _text(ref.get("key"))
    if not key:
        errors.append(required(f"{path}.key"))
    elif any(not " " <= ch <= "~" or ch == "=" for ch in key):
        errors.append(invalid(f"{path}.key", key, _RELAXED_ENV_NAME))
    volume = _text(ref.get("volumeName"))
    if not volume:
        errors.append(required(f"{path}.volumeName"))
    else:
        errors += [invalid(f"{path}.volumeName", volume, m) for m in dns1123_label_errors(volume)]
    file_path = _text(ref.get("path"))
    if not file_path:
        errors.append(required(f"{path}.path"))
    else:
        errors += _no_backsteps(file_path, f"{path}.path")
    return errors


def _file_key_ref_volumes(spec: Mapping[str, Any], field: str) -> list[FieldError]:
    """validateFileKeyRefVolumes: a fileKeyRef's volume exists and is an emptyDir."""
    volumes = {_text(v.get("name")): v for v in _list(spec.get("volumes")) if isinstance(v, Mapping)}
    errors: list[FieldError] = []
    for key in _CONTAINER_LISTS:
        for cpath, c in each_object(_list(spec.get(key)), f"{field}.{key}", _shapes()):
            for epath, var in each_object(_list(c.get("env")), f"{cpath}.env", _shapes()):
                ref = get_path(var, "valueFrom", "fileKeyRef")
                if not isinstance(ref, Mapping):
                    continue
                name, vpath = _text(ref.get("volumeName")), f"{epath}.valueFrom.fileKeyRef.volumeName"
                if name not in volumes:
                    errors.append(FieldError(ERROR_NOT_FOUND, vpath, name))
                elif not isinstance(volumes[name].get("emptyDir"), Mapping):
                    errors.append(invalid(vpath, name, "referenced volume must be of type emptyDir"))
    return errors


def validate_pod_spec(spec: Any, field: str) -> list[FieldError]:
    """The 1.33-1.37 fields of a pod spec at ``field``, the rules that hold whatever the gates."""
    if not isinstance(spec, Mapping):
        return []
    errors = _hostname_override(spec, field)
    for vpath, volume in each_object(_list(spec.get("volumes")), f"{field}.volumes", _shapes()):
        if isinstance(volume.get("projected"), Mapping):
            errors += _projection(volume["projected"], f"{vpath}.projected")
    os = spec.get("os")
    for key in _CONTAINER_LISTS:
        for path, c in each_object(_list(spec.get(key)), f"{field}.{key}", errors):
            for epath, var in each_object(_list(c.get("env")), f"{path}.env", _shapes()):
                ref = get_path(var, "valueFrom", "fileKeyRef")
                if isinstance(ref, Mapping):
                    errors += _file_key_selector(ref, f"{epath}.valueFrom.fileKeyRef")
            errors += _lifecycle(key, c, path, os)
            if key == "ephemeralContainers":  # validateFieldAllowList
                errors += [forbidden(f"{path}.{name}", _NOT_FOR_EPHEMERAL)
                           for name in _NOT_EPHEMERAL if c.get(name) is not None]
    return errors + _file_key_ref_volumes(spec, field)


def _restart_policy(c: Mapping[str, Any], path: str, opts: PodOptions) -> list[FieldError]:
    """validateContainerRestartPolicy (a regular container, an init container other than a
    sidecar, a sidecar under AllowRestartAllContainers)."""
    policy, rules = c.get("restartPolicy"), _list(c.get("restartPolicyRules"))
    errors: list[FieldError] = []
    if policy is None:
        if not rules:
            return []
        errors.append(required(f"{path}.restartPolicy", "must specify restartPolicy when restart rules are used"))
    elif policy not in _CONTAINER_RESTART_POLICIES:
        errors.append(not_supported(f"{path}.restartPolicy", policy, _CONTAINER_RESTART_POLICIES))
    if len(rules) > _MAX_RESTART_RULES:
        errors.append(too_many(f"{path}.restartPolicyRules", len(rules), _MAX_RESTART_RULES))
    actions = ("Restart", "RestartAllContainers") if opts.restart_all else ("Restart",)
    for i, rule in enumerate(rules):
        rpath, rule = f"{path}.restartPolicyRules[{i}]", _dict(rule)
        action = _text(rule.get("action"))
        if action not in actions:
            errors.append(not_supported(f"{rpath}.action", action, actions))
        codes = rule.get("exitCodes")
        if not isinstance(codes, Mapping):
            errors.append(required(f"{rpath}.exitCodes", "must be specified"))
            continue
        operator = _text(codes.get("operator"))
        if operator not in _EXIT_CODE_OPERATORS:
            errors.append(not_supported(f"{rpath}.exitCodes.operator", operator, _EXIT_CODE_OPERATORS))
        values = _list(codes.get("values"))
        if len(values) > _MAX_EXIT_CODES:
            errors.append(too_many(f"{rpath}.exitCodes.values", len(values), _MAX_EXIT_CODES))
    return errors


def _init_restart_policy(c: Mapping[str, Any], path: str, opts: PodOptions) -> list[FieldError]:
    """validateInitContainerRestartPolicy."""
    policy, rules = c.get("restartPolicy"), _list(c.get("restartPolicyRules"))
    if policy is None:
        return [required(f"{path}.restartPolicy", "must specify restartPolicy when restart rules are used")] \
            if rules else []
    if not opts.restart_rules:
        return [] if policy == "Always" else [not_supported(f"{path}.restartPolicy", policy, ["Always"])]
    if policy != "Always" or opts.restart_all:
        return _restart_policy(c, path, opts)
    return [forbidden(f"{path}.restartPolicyRules", "restartPolicyRules are not allowed for init containers with "
                                                     "restart policy Always")] if rules else []


def _value_from(var: Mapping[str, Any], path: str, opts: PodOptions) -> list[FieldError]:
    """validateEnvVarValueFrom's count of sources."""
    source = var.get("valueFrom")
    if not isinstance(source, Mapping):
        return []
    count = sum(1 for key in _VALUE_SOURCES if source.get(key) is not None)
    if count == 0:
        return [invalid(path, "", _NO_SOURCE_FILES if opts.env_files else _NO_SOURCE)]
    if _text(var.get("value")):
        return [invalid(path, "", "may not be specified when `value` is not empty")]
    if count > 1:
        return [invalid(path, "", "may not have more than one field specified at a time")]
    return []


def _host_users(spec: Mapping[str, Any], field: str, opts: PodOptions) -> list[FieldError]:
    """validateHostUsers: with ``hostUsers: false``, no host network (unless allowed), PID or IPC
    namespace (kube's field paths ``HostPID`` and ``HostIPC``, capitalized), no volumeDevices."""
    if not _no_host_users(spec):
        return []
    errors: list[FieldError] = []
    if not opts.userns_host_network and spec.get("hostNetwork") is True:
        errors.append(forbidden(f"{field}.hostNetwork", "when `hostUsers` is false"))
    for key, path in (("hostPID", "HostPID"), ("hostIPC", "HostIPC")):
        if spec.get(key) is True:
            errors.append(forbidden(f"{field}.{path}", "when `hostUsers` is false"))
    if not opts.userns_volume_devices:
        for key in _CONTAINER_LISTS:
            for i, c in enumerate(_list(spec.get(key))):
                if _list(_dict(c).get("volumeDevices")):
                    errors.append(forbidden(f"{field}.{key}[{i}].volumeDevices", "when `hostUsers` is false"))
    return errors


def pod_option_errors(spec: Any, field: str, opts: PodOptions) -> list[FieldError]:
    """The rules of the 1.33-1.37 pod-spec fields that depend on ``opts``: containers'
    restartPolicy and restartPolicyRules (an ephemeral container's are ``validate_pod_spec``'s),
    an env var's number of sources, ``hostUsers: false`` with host namespaces or volumeDevices."""
    if not isinstance(spec, Mapping):
        return []
    errors: list[FieldError] = []
    for key in _CONTAINER_LISTS:
        for path, c in each_object(_list(spec.get(key)), f"{field}.{key}", _shapes()):
            for epath, var in each_object(_list(c.get("env")), f"{path}.env", _shapes()):
                errors += _value_from(var, f"{epath}.valueFrom", opts)
            if key == "initContainers":
                errors += _init_restart_policy(c, path, opts)
            elif key == "containers":
                if opts.restart_rules:
                    errors += _restart_policy(c, path, opts)
                elif c.get("restartPolicy") is not None:
                    errors.append(forbidden(f"{path}.restartPolicy", "may not be set for non-init containers"))
    return errors + _host_users(spec, field, opts)


# ------------------------------------------------------------------------------------ gates


_USER_VOLUMES = ("configMap", "secret", "downwardAPI", "projected")
_USER_PROJECTIONS = ("serviceAccountToken", "clusterTrustBundle", "podCertificate")
_ITEM_PROJECTIONS = ("configMap", "secret", "downwardAPI")


def _items_users(source: Any) -> Iterator[tuple[str, Obj, str]]:
    for item in _list(_dict(source).get("items")):
        if isinstance(item, dict):
            yield "AtomicWriteVolumeUserFields", item, "user"


def _gated_leaves(spec: Any) -> Iterator[tuple[str, Obj, str]]:
    """(gate, holder, key) of every place in a pod spec a field of a gate added in 1.34-1.37 can
    be: ``holder[key]``, whether set or not."""
    for volume in _list(_dict(spec).get("volumes")):
        if not isinstance(volume, dict):
            continue
        if isinstance(volume.get("emptyDir"), dict):
            yield "EmptyDirVolumeMode", volume["emptyDir"], "mode"
        for kind in _USER_VOLUMES:
            source = volume.get(kind)
            if not isinstance(source, dict):
                continue
            yield "AtomicWriteVolumeUserFields", source, "defaultUser"
            yield from _items_users(source)
            for projection in _list(source.get("sources")) if kind == "projected" else []:
                if not isinstance(projection, dict):
                    continue
                yield "PodCertificateRequest", projection, "podCertificate"
                yield "ClusterTrustBundleProjection", projection, "clusterTrustBundle"
                for name in _USER_PROJECTIONS:
                    if isinstance(projection.get(name), dict):
                        yield "AtomicWriteVolumeUserFields", projection[name], "user"
                for name in _ITEM_PROJECTIONS:
                    yield from _items_users(projection.get(name))
    for _key, c in _containers(spec):
        for mount in _list(c.get("volumeMounts")):
            if isinstance(mount, dict):
                yield "VolumeBindMountOptions", mount, "bindMountOptions"
        for probe in (c.get(p) for p in _PROBES):  # the gates' documentation names probes only
            if not isinstance(probe, dict):
                continue
            if isinstance(probe.get("grpc"), dict):
                yield "GRPCContainerProbeTLS", probe["grpc"], "mode"
            if isinstance(probe.get("httpGet"), dict):
                yield "H2CContainerProbe", probe["httpGet"], "protocol"


def _drop_restart_rules(spec: Obj) -> None:
    """dropContainerRestartRules: an init container's restartPolicy other than Always, the
    restartPolicy of regular and ephemeral containers, every container's restartPolicyRules."""
    for key, c in _containers(spec):
        if key != "initContainers" or c.get("restartPolicy") not in (None, "Always"):
            c.pop("restartPolicy", None)
        c.pop("restartPolicyRules", None)


def _pod_resources_in_use(spec: Mapping[str, Any]) -> bool:
    """podLevelResourcesInUse: the spec's ``resources`` has requests or limits."""
    resources = _dict(spec.get("resources"))
    return bool(_dict(resources.get("requests"))) or bool(_dict(resources.get("limits")))


def _claims_in_use(spec: Mapping[str, Any]) -> bool:
    """dynamicResourceAllocationInUse: the spec has ``resourceClaims`` (containers' claims need
    one of them)."""
    return bool(_list(spec.get("resourceClaims")))


def _image_volumes_in_use(spec: Mapping[str, Any]) -> bool:
    """imageVolumesInUse: a volume of the spec is an ``image`` volume."""
    return any(_dict(v).get("image") is not None for v in _list(spec.get("volumes")))


def _drop_image_volumes(spec: Obj) -> None:
    """dropImageVolumes: the ``image`` volumes go, and every container's mounts of them; a list
    left empty goes too (Go's nil slice, omitted)."""
    names = {_dict(v).get("name") for v in _list(spec.get("volumes")) if _dict(v).get("image") is not None}
    if "volumes" in spec:
        kept = [v for v in _list(spec["volumes"]) if _dict(v).get("image") is None]
        if kept:
            spec["volumes"] = kept
        else:
            del spec["volumes"]
    for _key, c in _containers(spec):
        if "volumeMounts" not in c:
            continue
        mounts = [m for m in _list(c["volumeMounts"]) if _dict(m).get("name") not in names]
        if mounts:
            c["volumeMounts"] = mounts
        else:
            del c["volumeMounts"]


def _drop_claims(spec: Obj) -> None:
    """dropDisabledDynamicResourceAllocationFields: every container's ``resources.claims`` and
    the spec's ``resourceClaims``."""
    for _key, c in _containers(spec):
        resources = c.get("resources")
        if isinstance(resources, dict):
            resources.pop("claims", None)
    spec.pop("resourceClaims", None)


def drop_pod_fields(spec: Obj, old: Any, enabled: Enabled) -> None:
    """dropDisabledFields (pkg/api/pod/util.go) of the 1.33-1.37 pod-spec fields: each is dropped
    while its gate is off unless the stored ``old`` spec (an update's; None on create) uses it."""
    old_spec = _dict(old)
    if not enabled("PodLevelResources") and not _pod_resources_in_use(old_spec):
        spec.pop("resources", None)
    if not enabled("DynamicResourceAllocation") and not _claims_in_use(old_spec):
        _drop_claims(spec)
    if not enabled("ImageVolume") and not _image_volumes_in_use(old_spec):
        _drop_image_volumes(spec)
    in_use = {gate for gate, holder, key in _gated_leaves(old_spec) if holder.get(key) is not None}
    for gate, holder, key in list(_gated_leaves(spec)):
        if not enabled(gate) and gate not in in_use:
            holder.pop(key, None)
    for gate, key in (("HostnameOverride", "hostnameOverride"), ("GenericWorkload", "schedulingGroup"),
                      ("EvictionRequestAPI", "evictionResponders")):
        if not enabled(gate) and old_spec.get(key) is None:
            spec.pop(key, None)
    if not enabled("ContainerRestartRules") and not _restart_rules_in_use(old_spec):
        _drop_restart_rules(spec)
    stop_in_use = any(get_path(c, "lifecycle", "stopSignal") is not None for _, c in _containers(old_spec))
    if not enabled("ContainerStopSignals") and not stop_in_use:
        for _key, c in _containers(spec):
            lifecycle = c.get("lifecycle")
            if isinstance(lifecycle, dict) and "stopSignal" in lifecycle:
                del lifecycle["stopSignal"]
                if not lifecycle:  # a lifecycle left empty is dropped with it (dropContainerStopSignals)
                    del c["lifecycle"]
    if not enabled("EnvFiles") and not _file_key_refs_in_use(old_spec):
        for _key, c in _containers(spec):
            for var in _list(c.get("env")):
                source = var.get("valueFrom") if isinstance(var, dict) else None
                if isinstance(source, dict):
                    source.pop("fileKeyRef", None)


_STATUS_LISTS = ("containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses")


def _generation_tracked(status: Mapping[str, Any]) -> bool:
    """podObservedGenerationTrackingInUse: a non-zero ``observedGeneration`` in the status or
    one of its conditions."""
    if status.get("observedGeneration") not in (None, 0):
        return True
    return any(_dict(c).get("observedGeneration") not in (None, 0) for c in _list(status.get("conditions")))


def drop_pod_status_fields(status: Obj, old_status: Any, old_spec: Any, enabled: Enabled) -> None:
    """dropDisabledPodStatusFields (pkg/api/pod/util.go) of the status fields whose gates changed
    their default between 1.33 and 1.37: each is dropped while its gate is off unless the stored
    pod (``old_status``, ``old_spec``: an update's; None on create) uses it, as kube checks it."""
    old_st, old_sp = _dict(old_status), _dict(old_spec)
    if not enabled("InPlacePodLevelResourcesVerticalScaling") and old_st.get("resources") is None \
            and old_st.get("allocatedResources") is None:
        status.pop("resources", None)
        status.pop("allocatedResources", None)
    if not enabled("DynamicResourceAllocation") and not _claims_in_use(old_sp):
        status.pop("resourceClaimStatuses", None)
    if not enabled("DRAExtendedResource") and old_st.get("extendedResourceClaimStatus") is None:
        status.pop("extendedResourceClaimStatus", None)
    if not enabled("ResourceHealthStatus"):  # kube keeps no stored value here
        for key in _STATUS_LISTS:
            for c in _list(status.get(key)):
                if isinstance(c, dict):
                    c.pop("allocatedResourcesStatus", None)
    if not enabled("PodObservedGenerationTracking") and not _generation_tracked(old_st):
        status.pop("observedGeneration", None)
        for condition in _list(status.get("conditions")):
            if isinstance(condition, dict):
                condition.pop("observedGeneration", None)
