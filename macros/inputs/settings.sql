{#
  dedup_settings(): the validated algorithm settings, from dbt vars.

  Every setting that reaches SQL or the fingerprint model passes through here: numbers must be numbers
  (a string such as "0.7; drop table x" stops the build), ranges are checked, and an invalid combination
  stops the build with a message that names the var and the value.
#}

{% macro dedup_settings() %}
    {%- set preset_name = var("preset") | string -%}
    {%- set presets = var("presets") -%}
    {%- if preset_name not in presets -%}
        {{ exceptions.raise_compiler_error(
            "dedup settings: var 'preset' must be one of " ~ (presets.keys() | list | sort | join(", "))
            ~ "; got '" ~ preset_name ~ "'") }}
    {%- endif -%}
    {%- set preset = dict(presets[preset_name]) -%}
    {%- set threshold = _dedup_float("threshold", var("threshold"), 0.0, 1.0, false) -%}
    {%- if preset.min_p_candidate is defined -%}
        {#- the most rows per band (fewest false candidates) whose P(candidate) at the threshold is at least
            min_p_candidate -#}
        {%- set chosen = {"rows": 1} -%}
        {%- for rows in [64, 32, 16, 8, 4, 2, 1] -%}
            {%- set bands = preset.num_hashes // rows -%}
            {%- if chosen.rows == 1 and 1 - (1 - threshold ** rows) ** bands >= preset.min_p_candidate -%}
                {%- do chosen.update({"rows": rows}) -%}
            {%- endif -%}
        {%- endfor -%}
        {%- do preset.update({"rows_per_band": chosen.rows}) -%}
    {%- endif -%}
    {%- set num_hashes = _dedup_int("num_hashes", var("num_hashes"), 1, 4096, preset.num_hashes) -%}
    {%- set rows_per_band = _dedup_int("rows_per_band", var("rows_per_band"), 1, 4096, preset.rows_per_band) -%}
    {%- if num_hashes % rows_per_band != 0 -%}
        {{ exceptions.raise_compiler_error(
            "dedup settings: num_hashes (" ~ num_hashes ~ ") must be divisible by rows_per_band ("
            ~ rows_per_band ~ ")") }}
    {%- endif -%}
    {%- set settings = {
        "preset": preset_name,
        "shingle_size": _dedup_int("shingle_size", var("shingle_size"), 1, 64),
        "num_hashes": num_hashes,
        "rows_per_band": rows_per_band,
        "bands": (num_hashes // rows_per_band),
        "seed": _dedup_int("seed", var("seed"), 0, 9223372036854775807),
        "threshold": threshold,
        "signature_overlap_threshold": _dedup_float(
            "signature_overlap_threshold", var("signature_overlap_threshold"), 0.0, 1.0, true),
        "batch_size": _dedup_int("batch_size", var("batch_size"), 1, 10000000),
        "fingerprint_workers": _dedup_int("fingerprint_workers", var("fingerprint_workers"), 1, 256),
        "clustering": _dedup_choice("clustering", var("clustering"), ["components", "strict"]),
        "boilerplate_filter": _dedup_choice(
            "boilerplate_filter", var("boilerplate_filter") | string | lower, ["false", "true"]) == "true",
        "boilerplate_max_share": _dedup_float(
            "boilerplate_max_share", var("boilerplate_max_share"), 0.0, 1.0, false),
        "boilerplate_min_pages": _dedup_int("boilerplate_min_pages", var("boilerplate_min_pages"), 1, 1000000000),
    } -%}
    {#- The settings a removal was decided under, as one text (int_run_settings.settings_key, the manifest's
        settings and every row of removals). -#}
    {%- do settings.update({"settings_key":
        "shingle_size=" ~ settings.shingle_size ~ " num_hashes=" ~ num_hashes ~ " rows_per_band=" ~ rows_per_band
        ~ " seed=" ~ settings.seed ~ " threshold=" ~ threshold ~ " clustering=" ~ settings.clustering
        ~ (" boilerplate_filter=true boilerplate_max_share=" ~ settings.boilerplate_max_share
            ~ " boilerplate_min_pages=" ~ settings.boilerplate_min_pages if settings.boilerplate_filter
            else " boilerplate_filter=false")}) -%}
    {{ return(settings) }}
{% endmacro %}


{#- A whole-number var; an empty one takes fallback (the preset's value) or stops the build. -#}
{% macro _dedup_int(name, value, minimum, maximum, fallback=none) %}
    {%- if (value is none or value == "") and fallback is not none -%}{{ return(fallback) }}{%- endif -%}
    {%- set text = value | string | trim -%}
    {%- if value is boolean or not modules.re.fullmatch("-?[0-9]+", text) -%}
        {{ exceptions.raise_compiler_error(
            "dedup settings: var '" ~ name ~ "' must be a whole number, got '" ~ value ~ "'") }}
    {%- endif -%}
    {%- set number = text | int -%}
    {%- if number < minimum or number > maximum -%}
        {{ exceptions.raise_compiler_error(
            "dedup settings: var '" ~ name ~ "' must be between " ~ minimum ~ " and " ~ maximum
            ~ ", got " ~ number) }}
    {%- endif -%}
    {{ return(number) }}
{% endmacro %}


{% macro _dedup_float(name, value, minimum, maximum, allow_minimum) %}
    {%- set text = value | string | trim -%}
    {%- if value is boolean or not modules.re.fullmatch("-?[0-9]+(\.[0-9]+)?([eE]-?[0-9]+)?", text) -%}
        {{ exceptions.raise_compiler_error(
            "dedup settings: var '" ~ name ~ "' must be a number, got '" ~ value ~ "'") }}
    {%- endif -%}
    {%- set number = text | float -%}
    {%- if number > maximum or number < minimum or (number == minimum and not allow_minimum) -%}
        {{ exceptions.raise_compiler_error(
            "dedup settings: var '" ~ name ~ "' must be in " ~ ("[" if allow_minimum else "(")
            ~ minimum ~ ", " ~ maximum ~ "], got " ~ number) }}
    {%- endif -%}
    {{ return(number) }}
{% endmacro %}


{#- A var that must be one of `choices` (text). -#}
{% macro _dedup_choice(name, value, choices) %}
    {%- set text = value | string | trim -%}
    {%- if text not in choices -%}
        {{ exceptions.raise_compiler_error(
            "dedup settings: var '" ~ name ~ "' must be one of " ~ (choices | join(", ")) ~ "; got '" ~ value ~ "'") }}
    {%- endif -%}
    {{ return(text) }}
{% endmacro %}


{#- Whether the opt-in missed-pair audit (models/diagnostics/audit) is on: var audit true / 1 / yes. -#}
{% macro audit_enabled() %}
    {{- return(var("audit") | string | lower in ("true", "1", "yes")) -}}
{% endmacro %}


{#-
  Whether fingerprinted (and fingerprinted.parquet) carries each document's normalized text and shingles:
  var fingerprint_detail "full"; empty, "off" or "default" (the default) leave them out.  Any other value
  stops the build.
-#}
{% macro fingerprint_detail_enabled() %}
    {%- set value = var("fingerprint_detail", "") | string | trim | lower -%}
    {%- if value in ("", "off", "default", "none") -%}{{ return(false) }}{%- endif -%}
    {%- if value != "full" -%}
        {{ exceptions.raise_compiler_error(
            "dedup settings: var 'fingerprint_detail' must be full or off, got '" ~ value ~ "'") }}
    {%- endif -%}
    {{ return(true) }}
{% endmacro %}
