# Bash completion for posenc (docs/cli.md, "Help and completion"): commands, each command's flags
# (those `posenc help CMD` lists) and the values of the flags that take names or files. meson
# installs it as share/bash-completion/completions/posenc; tests/tools/completion.sh checks it
# against `posenc help CMD`, so a flag added to the tool's tables without a word here fails there.

_posenc() {
  local cur=${COMP_WORDS[COMP_CWORD]}
  local prev=""
  ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
  local commands="freqs table apply alibi sinusoidal decay dials ramp check emit accuracy layers entropy t5-bias"
  COMPREPLY=()

  # The command: the first word that names one (or "help").
  local cmd="" i
  for ((i = 1; i < COMP_CWORD; i++)); do
    case " $commands help " in
      *" ${COMP_WORDS[i]} "*)
        cmd=${COMP_WORDS[i]}
        break
        ;;
    esac
  done

  # The value of the flag before the cursor.
  case $prev in
    --layout)
      local layouts="interleaved half gptj norm neox rotate_half"
      [[ $cmd == sinusoidal ]] && layouts="paper split"
      [[ -z $cmd ]] && layouts="$layouts paper split"
      COMPREPLY=($(compgen -W "$layouts" -- "$cur"))
      ;;
    --format) COMPREPLY=($(compgen -W "json csv text" -- "$cur")) ;;
    --scaling) COMPREPLY=($(compgen -W "none linear ntk dynamic yarn llama3 longrope" -- "$cur")) ;;
    --shape-order) COMPREPLY=($(compgen -W "THD BHTD BTHD" -- "$cur")) ;;
    --lang) COMPREPLY=($(compgen -W "c cpp" -- "$cur")) ;;
    --table) COMPREPLY=($(compgen -W "compact simd" -- "$cur")) ;;
    --variant) COMPREPLY=($(compgen -W "causal symmetric" -- "$cur")) ;;
    --temperature) COMPREPLY=($(compgen -W "none llama4 log-n" -- "$cur")) ;;
    --log) COMPREPLY=($(compgen -W "hf-float32 exact" -- "$cur")) ;;
    --preset)
      # The lists of `posenc --help`: 1-D presets (every RoPE command) and model presets (layers
      # only; apply and entropy take both).
      local help presets models
      help=$("${COMP_WORDS[0]}" --help 2> /dev/null)
      presets=$(sed -n 's/^Presets: //p' <<< "$help" | tr -d ',')
      models=$(sed -n 's/^Model presets: //p' <<< "$help" | tr -d ',')
      case $cmd in
        layers) presets=$models ;;
        apply | entropy | "") presets="$presets $models" ;;
      esac
      COMPREPLY=($(compgen -W "$presets" -- "$cur"))
      ;;
    --hf-config | --gguf | --input | --input-k | --position-ids | --output | --output-k | --svg | \
      --qk | --weights)
      COMPREPLY=($(compgen -f -- "$cur"))
      ;;
  esac
  case $prev in
    --no-truncate | --truncate | --no-scale-cos-sin | --scale-cos-sin | --csv | --verbose | \
      --bloom | --version | --help | -h | --mrope-interleaved | --bidirectional | --causal) ;;
    --*) return 0 ;;  # a flag's value: completed above, or free
  esac

  if [[ -z $cmd ]]; then
    if [[ $cur == -* ]]; then
      COMPREPLY=($(compgen -W "--help --version" -- "$cur"))
    else
      COMPREPLY=($(compgen -W "$commands help" -- "$cur"))
    fi
    return 0
  fi
  if [[ $cmd == help ]]; then
    COMPREPLY=($(compgen -W "$commands" -- "$cur"))
    return 0
  fi

  # The flags of each command, by the groups of tools/cli/flags.cpp.
  local source="--preset --hf-config --gguf --layer-type --max-input-bytes --max-depth --verbose"
  local rope="--head-dim --rotary-dim --partial-rotary-factor --base --layout --scaling --factor
    --original-max --max-position-embeddings --beta-fast --beta-slow --no-truncate --truncate
    --mscale --mscale-all-dim --attention-factor --low-freq-factor --high-freq-factor
    --short-factor --long-factor --seq-len"
  local format="--format --csv"
  local flags=""
  case $cmd in
    freqs) flags="$source $rope $format" ;;
    table) flags="$source $rope $format --positions" ;;
    apply)
      flags="$source $rope $format --input --input-k --position-ids --shape-order --output
        --output-k --no-scale-cos-sin --scale-cos-sin --max-elements --mrope-section
        --mrope-interleaved"
      ;;
    alibi) flags="$format --heads --positions --variant --bloom" ;;
    sinusoidal) flags="$format --head-dim --positions --layout --padding-idx --base" ;;
    decay) flags="$source $rope $format --max-distance --svg --work-limit" ;;
    dials) flags="$source $rope $format --positions --svg" ;;
    ramp) flags="$source $rope $format --svg" ;;
    check) flags="$source $rope $format --max-distance --work-limit" ;;
    emit) flags="$source $rope --lang --positions --table --name" ;;
    accuracy) flags="$source $rope $format --positions --svg --work-limit" ;;
    layers) flags="$format --preset --hf-config --max-input-bytes --max-depth" ;;
    entropy)
      # The rope group without --seq-len (each length L is evaluated at seq_len L).
      flags="$source ${rope/--seq-len/} $format --lengths --samples --seed --temperature --floor-scale
        --attn-scale --training-length --qk --svg --work-limit"
      ;;
    t5-bias)
      flags="$format --num-buckets --max-distance --bidirectional --causal --log
        --relative-positions --query-length --key-length --weights --max-input-bytes"
      ;;
  esac
  COMPREPLY=($(compgen -W "$flags --help" -- "$cur"))
  return 0
}
complete -F _posenc posenc
