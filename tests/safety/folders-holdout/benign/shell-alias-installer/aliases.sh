alias gs='git status -sb'
alias gl='git log --oneline --graph -n 20'
alias gco='git checkout'
alias gd='git diff'
