# minimal prompt theme
__pt_git() { git symbolic-ref --short HEAD 2>/dev/null; }
if [ -n "$ZSH_VERSION" ]; then
  setopt PROMPT_SUBST
  PROMPT=$'%F{blue}%~%f $(__pt_git)\n%(?.%F{green}.%F{red})>%f '
else
  PS1='\[\e[34m\]\w\[\e[0m\] $(__pt_git)\n$( [ $? = 0 ] && printf "\[\e[32m\]" || printf "\[\e[31m\]")>\[\e[0m\] '
fi
