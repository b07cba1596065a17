// PassKey<T>: a constructor argument that only T can make. A class whose
// instances must come from its own factory (Start(), Open(), Create(),
// Parse()) takes one in a public constructor, so that std::make_unique and
// std::make_shared can call the constructor while no other code can (it
// cannot make the key). The idiom of Chromium's base::PassKey.
#ifndef TUNEFLEET_BASE_PASS_KEY_H_
#define TUNEFLEET_BASE_PASS_KEY_H_

namespace tunefleet::base {

template <typename T>
class PassKey {
 private:
  friend T;
  PassKey() = default;
};

}  // namespace tunefleet::base

#endif  // TUNEFLEET_BASE_PASS_KEY_H_
