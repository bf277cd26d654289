; sbpl_check.scm - a second, independent reading of an omnibox Seatbelt
; profile, by Debian's TinyScheme (the interpreter SBPL itself grew from).
;
; The test driver writes a file that defines `params' (an association list
; of the -D values), loads this file, then holds the profile verbatim.
; Every rule is printed as the C reader (tests/darwin/sbpl_check.c) lists
; it: "allow" or "deny", one "op NAME" per operation, then one line per
; path, regex, address or vnode type of its filters, in order, with the
; string expressions evaluated.  The driver compares both listings, so
; the profile's strings, escapes and parameters are read the same way by
; a real Scheme reader.

;; Debian's TinyScheme 1.42 fails equal? on strings ("string-ref: index must
;; be exact"), so names are compared as symbols.
(define (lookup name l)
  (cond ((null? l) #f)
        ((eq? (string->symbol (caar l)) (string->symbol name)) (car l))
        (else (lookup name (cdr l)))))

(define (param name)
  (let ((p (lookup name params)))
    (if p (cdr p) (error "undefined parameter" name))))

(define (emit kind value)
  (display kind) (display " ") (display value) (newline))

(define (walk f)
  (let ((head (car f)))
    (cond ((memq head '(literal subpath regex)) (emit head (eval (cadr f))))
          ((memq head '(require-all require-any require-not)) (for-each walk (cdr f)))
          ((and (eq? head 'remote) (eq? (cadr f) 'unix-socket))
           (emit 'unix-socket (eval (cadr (caddr f)))))
          ((memq head '(local remote)) (emit head (eval (caddr f))))
          ((eq? head 'vnode-type) (emit 'vnode-type (cadr f)))
          ((eq? head 'target) #t)
          (else (error "unknown filter" head)))))

(define (rule kind args)
  (display kind) (newline)
  (for-each (lambda (x)
              (if (pair? x) (walk x) (emit 'op x)))
            args))

(define-macro (version n) `(emit 'version ,n))
(define-macro (allow . args) `(rule "allow" ',args))
(define-macro (deny . args) `(rule "deny" ',args))
